// The console's administration pages in a real Chromium against a real `toolhost serve`:
// adding an MCP server (a Streamable HTTP one that wants a bearer token and a header) and
// testing it, before and after saving; making a token (shown once), using it, revoking it
// and seeing it refused; the users' roles; plugins and sources, the audit log and the
// settings. Needs MCP_URL (the MCP server), BEARER and HEADER (`NAME=VALUE`).
import assert from 'node:assert/strict';
import { run } from './harness.mjs';

const mcpUrl = process.env.MCP_URL;
const bearer = process.env.BEARER;
const [headerName, headerValue] = (process.env.HEADER ?? '').split('=');
assert.ok(mcpUrl && bearer && headerValue, 'MCP_URL, BEARER and HEADER are required');

await run('admin', async (t) => {
  const { base, page, result, step, measure, html, shot } = t;
  page.on('dialog', (d) => d.accept());
  await t.signIn();

  // Add an MCP server: the form, a failing test, a passing one, save.
  await measure('/mcp-servers/new', 'mcp-server-new');
  await page.fill('#srv-name', 'py');
  await page.check('input[name=kind][value=http]');
  assert.ok(await page.isHidden('#srv-command'), 'stdio fields hide for a URL');
  await page.fill('#srv-url', mcpUrl);
  await page.fill('#srv-bearer', 'wrong-token');
  await page.click('[data-add="headers"]');
  await page.fill('[data-pairs="headers"] .pair:last-child [data-key]', headerName);
  await page.fill('[data-pairs="headers"] .pair:last-child [data-value]', headerValue);
  await page.fill('#srv-icon', 'calculator');
  await page.click('#server-test');
  await page.waitForFunction(() => /failed/.test(document.getElementById('test-summary').textContent));
  result.pages.failedTest = (await page.textContent('#test-summary')).trim();
  await page.fill('#srv-bearer', bearer);
  await page.click('#server-test');
  await page.waitForSelector('#test-tools li');
  result.pages.test = {
    summary: (await page.textContent('#test-summary')).trim(),
    tools: await page.$$eval('#test-tools li', (l) => l.map((x) => x.getAttribute('data-tool')).sort()),
  };
  await shot('mcp-server-test');
  await Promise.all([page.waitForURL(/\/mcp-servers\/py\?saved=1$/), page.click('#server-form button[type=submit]')]);
  const saved = await html();
  assert.ok(!saved.includes(bearer) && !saved.includes(headerValue), 'no secret in the page');
  // Saved secrets are kept when the fields stay empty: the test still passes.
  assert.match(await page.getAttribute('#srv-bearer', 'placeholder'), /stored/);
  await page.click('#server-test');
  await page.waitForSelector('#test-tools li');
  result.pages.retest = (await page.textContent('#test-summary')).trim();
  // An edit saves with the version read.
  await page.fill('#srv-description', 'The Python SDK test server');
  await page.click('#server-form button[type=submit]');
  await page.waitForSelector('#server-status:not([hidden])');
  result.pages.edited = (await page.textContent('#server-status')).trim();
  await measure('/mcp-servers', 'mcp-servers');
  result.pages.servers = await page.$$eval('#servers tbody tr', (rows) => rows.map((r) => ({
    name: r.getAttribute('data-server'),
    text: r.textContent.replace(/\s+/g, ' ').trim(),
  })));
  await shot('mcp-servers');
  step('an MCP server was added and tested');

  // Tokens: make one, see it once, use it, revoke it, see it refused.
  await measure('/tokens', 'tokens');
  await page.fill('#token-name', 'ci robot');
  await page.click('#token-form button[type=submit]');
  await page.waitForSelector('#token-made:not([hidden])');
  const secret = await page.inputValue('#token-secret');
  assert.match(secret, /^th_/);
  await shot('token-made');
  const use = async () => (await fetch(`${base}/api/v1/tools`, { headers: { authorization: `Bearer ${secret}` } })).status;
  result.tokenBefore = await use();
  await page.reload();
  assert.ok(!(await page.content()).includes(secret), 'the secret is shown once only');
  const row = page.locator('#tokens tbody tr', { hasText: 'ci robot' });
  await row.locator('[data-revoke]').click();
  await row.locator('[data-status]', { hasText: 'revoked' }).waitFor();
  result.tokenAfter = await use();
  await page.reload();
  result.pages.revokedRow = (await page.locator('#tokens tbody tr', { hasText: 'ci robot' }).textContent()).replace(/\s+/g, ' ').trim();
  // Users and roles (admins).
  await page.fill('#user-name', 'bob');
  await page.selectOption('#user-role', 'viewer');
  await Promise.all([page.waitForNavigation(), page.click('#user-form button[type=submit]')]);
  await page.selectOption('[data-role-of="bob"]', 'operator');
  await page.waitForTimeout(300);
  await page.reload();
  result.pages.bobRole = await page.inputValue('[data-role-of="bob"]');
  await shot('tokens');
  step('a token was made, used, revoked and refused');

  // Plugins and sources, the audit log, the settings.
  await measure('/plugins', 'plugins');
  result.pages.plugins = {
    plugins: await page.$$eval('#plugin-table tbody tr td:first-child', (c) => c.map((x) => x.textContent.trim())),
    roots: await page.$$eval('#root-table tbody tr', (r) => r.length),
  };
  await shot('plugins');
  await measure('/audit', 'audit');
  result.pages.audit = await page.$$eval('#audit tbody tr td:nth-child(3)', (c) => c.map((x) => x.textContent.trim()));
  const audit = await html();
  assert.ok(!audit.includes(bearer) && !audit.includes(secret), 'no secret in the audit log');
  await shot('audit');
  await measure('/settings', 'settings');
  result.pages.settings = (await page.textContent('#main')).replace(/\s+/g, ' ');
  await shot('settings');
  step('plugins, audit and settings');
});
