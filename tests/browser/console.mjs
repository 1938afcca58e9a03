// The console in a real Chromium (Debian's, at /usr/bin/chromium, driven by playwright-core):
// run by crates/toolhost/tests/console.rs against a real `toolhost serve` with its store:
// signing in and out, the overview, the catalog and its search, a tool's and a tool set's
// page. Prints `RESULT {json}` (what the pages showed, and the budgets measured) for the
// Rust test to assert on.
import assert from 'node:assert/strict';
import { run } from './harness.mjs';

await run('console', async (t) => {
  const { base, token, context, page, cdp, result, step, measure, html, shot } = t;
  // Signed out: any page leads to the sign-in page.
  await page.goto(base + '/catalog');
  assert.equal(new URL(page.url()).pathname, '/sign-in');
  assert.equal(new URL(page.url()).searchParams.get('next'), '/catalog');
  await measure('/sign-in', 'sign-in');
  await shot('sign-in');

  // A wrong token: a clear error, still signed out.
  await page.fill('#token', 'th_wrong_0000000000000000');
  const refused = await t.expect(() => Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]));
  assert.equal(refused[0].status(), 401);
  const error = await page.textContent('[role=alert]');
  assert.match(error, /not accepted/);
  result.pages.wrongToken = error.trim();
  await shot('sign-in-wrong-token');
  assert.equal((await context.cookies()).filter((c) => c.name === 'toolhost_session').length, 0);
  step('a wrong token is refused');

  // The admin's token: a session cookie that is not the token, HttpOnly, SameSite=Strict.
  await page.fill('#token', token);
  await Promise.all([page.waitForURL(base + '/'), page.click('button[type=submit]')]);
  const cookies = (await context.cookies()).filter((c) => c.name === 'toolhost_session');
  assert.equal(cookies.length, 1);
  const [cookie] = cookies;
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, 'Strict');
  assert.equal(cookie.path, '/');
  assert.ok(cookie.value.startsWith('ths_') && !cookie.value.includes(token), 'the cookie is not the token');
  assert.equal(await page.evaluate(() => document.cookie), '', 'scripts cannot read the session');
  result.cookie = { httpOnly: cookie.httpOnly, sameSite: cookie.sameSite, path: cookie.path };
  await html();
  step('signed in');

  // Overview: the cards' numbers, the latest calls, the sandbox.
  await measure('/', 'overview');
  await html();
  const cards = {};
  for (const el of await page.$$('[data-card]')) {
    cards[await el.getAttribute('data-card')] = Number(await el.textContent());
  }
  result.pages.overview = {
    cards,
    latestCalls: await page.$$eval('#main table tbody tr', (rows) => rows.length),
    latestTools: await page.$$eval('#main section:first-of-type tbody td:first-child', (cells) => cells.map((c) => c.textContent.trim())),
    sandbox: (await page.textContent('p.sandbox')).trim(),
    icons: await page.$$eval('symbol', (s) => s.map((x) => x.id)),
  };
  await shot('overview');
  // Dark, when the system says so.
  const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const light = await background();
  await page.emulateMedia({ colorScheme: 'dark' });
  const dark = await background();
  assert.notEqual(light, dark, 'prefers-color-scheme: dark changes the colours');
  await shot('overview-dark');
  await page.emulateMedia({ colorScheme: 'light' });

  // Keyboard: the skip link comes first and shows; focus is visible.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.textContent.trim()), 'Skip to the content');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(outline, 'none', 'focus is visible');

  // Catalog: search by a word of `slow`'s description, with htmx.
  await measure('/catalog', 'catalog');
  await html();
  result.pages.catalog = {
    categories: await page.$$eval('section.category h2', (h) => h.map((x) => x.textContent.trim())),
    sets: await page.$$eval('li.set h3', (h) => h.map((x) => x.textContent.trim())),
  };
  await shot('catalog');
  await page.fill('#q', 'PAUSE');
  await page.press('#q', 'Enter');
  await page.waitForSelector('#tool-hits');
  await page.waitForURL(/q=PAUSE/);
  const hits = await page.$$eval('#results ul.list a', (a) => a.map((x) => x.textContent.trim()));
  result.pages.search = { hits, url: page.url() };
  assert.deepEqual(hits, ['slow']);
  await shot('catalog-search');
  // htmx keeps no copy of a page in the browser's storage (one user's data, after sign-out).
  assert.equal(await page.evaluate(() => localStorage.length), 0, 'no page in localStorage');
  step('search finds slow');

  // The same search without JavaScript: a plain GET form.
  await cdp.send('Emulation.setScriptExecutionDisabled', { value: true });
  await page.goto(base + '/catalog');
  await page.fill('#q', 'pause');
  await Promise.all([page.waitForURL(/\/catalog\?q=pause/), page.press('#q', 'Enter')]);
  assert.deepEqual(await page.$$eval('#results ul.list a', (a) => a.map((x) => x.textContent.trim())), ['slow']);
  await cdp.send('Emulation.setScriptExecutionDisabled', { value: false });
  step('search works without JavaScript');

  // A session gone while a page is open: htmx's next request takes the whole page to the
  // sign-in page (never into the results), which comes back to this page afterwards.
  await page.goto(base + '/catalog');
  const kept = await context.cookies();
  await context.clearCookies();
  await t.expect(async () => {
    await page.fill('#q', 'echo');
    await page.waitForURL(/\/sign-in\?next=/);
  });
  result.pages.expired = {
    next: new URL(page.url()).searchParams.get('next'),
    form: await page.$$eval('form[action="/sign-in"]', (f) => f.length),
  };
  await context.addCookies(kept);
  step('an expired session leads the whole page to sign in');

  // The tool's page: its documentation rendered, its schema shown.
  await measure('/catalog?q=pause', 'catalog-search');
  await Promise.all([page.waitForURL(/\/catalog\/tools\/slow$/), page.click('#results ul.list a')]);
  await measure('/catalog/tools/slow', 'tool');
  await html();
  result.pages.tool = {
    title: (await page.textContent('h1')).trim(),
    docsHeading: (await page.textContent('article.docs h1')).trim(),
    docsCode: await page.$$eval('article.docs code', (c) => c.map((x) => x.textContent)),
    params: await page.$$eval('#main table tbody tr td:first-child', (c) => c.map((x) => x.textContent.trim())),
    schema: await page.textContent('pre.schema'),
    set: await page.$$eval('.crumbs a', (a) => a.map((x) => x.getAttribute('href'))),
  };
  await page.click('details summary');
  await shot('tool');
  step('the tool page');

  // Its tool set's page.
  const setHref = result.pages.tool.set.find((h) => h.startsWith('/catalog/sets/'));
  assert.ok(setHref, 'the tool page links its tool set');
  await measure(setHref, 'tool-set');
  await html();
  result.pages.toolSet = {
    title: (await page.textContent('h1')).trim(),
    tools: await page.$$eval('#main ul.list a', (a) => a.map((x) => x.textContent.trim())),
  };
  await shot('tool-set');

  // A plugin's tool, granted to agents only: its page shows its set's definition.
  const plugin = await page.goto(base + '/catalog/tools/get_current_time');
  assert.equal(plugin.status(), 200);
  assert.match(await page.textContent('#main'), /agents granted this tool set get it/);
  result.pages.pluginTool = {
    title: (await page.textContent('h1')).trim(),
    set: await page.$$eval('.crumbs a', (a) => a.map((x) => x.getAttribute('href'))),
  };
  await shot('plugin-tool');

  // An unknown page.
  const missing = await t.expect(() => page.goto(base + '/catalog/tools/nope'));
  assert.equal(missing.status(), 404);

  // Sign out: back to the sign-in page; the session is gone even for a copy of its cookie.
  await page.goto(base + '/');
  await Promise.all([page.waitForURL(/\/sign-in$/), page.click('form[action="/sign-out"] button')]);
  assert.equal((await context.cookies()).filter((c) => c.name === 'toolhost_session').length, 0);
  await page.goto(base + '/');
  assert.equal(new URL(page.url()).pathname, '/sign-in');
  await context.addCookies([{ ...cookie }]);
  await page.goto(base + '/catalog');
  assert.equal(new URL(page.url()).pathname, '/sign-in', 'a signed-out session stays dead');
  await shot('signed-out');
  step('signed out');

});
