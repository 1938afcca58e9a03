// The agent form in a real Chromium, against `toolhost serve --database` with the fixture's
// tools (the folder set of echo and slow, the `time` and `units` plugin sets) and one
// toolhost.toml agent: run by crates/toolhost/tests/console_agents.rs. Creates an agent
// granting two sets with a per-tool deny, watching the effective-tools panel follow;
// saves, reloads; edits it in two tabs (the second gets the conflict banner, its edits
// kept, and saves over); exports it as TOML and imports it as a new agent; checks
// validation, the filter and bulk toggles, the read-only toolhost.toml agent, saving
// without JavaScript, and deleting. Prints `RESULT {json}` for the Rust test.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { run } from './harness.mjs';

const FOLDER = 'tool_set:data-tools';
const TIME = 'tool_set:time';
const UNITS = 'tool_set:units';

const panelTools = (p) => p.$$eval('[data-effective] [data-tool]', (li) => li.map((x) => x.dataset.tool));

// Waits until the panel lists exactly `names` (htmx swapped in a fresh one).
async function panelIs(p, names) {
  await p.waitForFunction((want) => {
    const got = Array.from(document.querySelectorAll('[data-effective] [data-tool]')).map((x) => x.dataset.tool);
    return JSON.stringify(got) === JSON.stringify(want);
  }, names, { timeout: 5000 }).catch(async () => {
    assert.fail(`the panel shows ${JSON.stringify(await panelTools(p))}, not ${JSON.stringify(names)}`);
  });
}

const card = (key) => `[data-source="${key}"]`;
const grant = (key) => `${card(key)} [data-grant]`;
const allow = (key, tool) => `${card(key)} [data-allow][value="${tool}"]`;
const shownTools = (p) => p.$$eval('[data-tool-row]:not([hidden])', (r) => r.map((x) => x.dataset.name));

async function state(p) {
  return p.evaluate(() => {
    const out = {};
    for (const c of document.querySelectorAll('[data-source]')) {
      const g = c.querySelector('[data-grant]');
      out[c.dataset.source] = {
        granted: g.checked,
        indeterminate: g.indeterminate,
        count: c.querySelector('[data-count]').textContent.trim(),
        layer: c.querySelector('select').value,
        allowed: Array.from(c.querySelectorAll('[data-allow]')).filter((a) => a.checked).map((a) => a.value),
      };
    }
    return out;
  });
}

await run('agents', async (t) => {
  const { base, page, result, step, measure, html, shot } = t;
  await t.signIn();

  // The list: toolhost.toml's agent, read-only; "New agent" for the admin.
  await measure('/agents', 'agents-list');
  await html();
  result.pages.list = {
    agents: await page.$$eval('[data-agent]', (li) => li.map((x) => x.dataset.agent)),
    readOnly: await page.$$eval('[data-agent]', (li) => li.filter((x) => x.textContent.includes('read-only')).map((x) => x.dataset.agent)),
  };
  await shot('agents-list');
  await Promise.all([page.waitForURL(base + '/agents/new'), page.click('a[href="/agents/new"]')]);

  // The form's first load.
  await measure('/agents/new', 'agent-form');
  await html();
  result.pages.form = {
    categories: await page.$$eval('[data-category] h3', (h) => h.map((x) => x.textContent.trim())),
    sources: await page.$$eval('[data-source]', (c) => c.map((x) => x.dataset.source)),
    panel: await panelTools(page),
  };

  // Validation: an empty name and an icon Lucide lacks, shown beside the fields, the edits kept.
  await page.fill('#f-id', 'helper');
  await page.fill('#f-icon', 'not-an-icon');
  await page.check(grant(TIME));
  await t.expect(() => Promise.all([page.waitForNavigation(), page.click('[data-save]')]));
  result.pages.invalid = {
    name: (await page.textContent('[data-error="name"]')).trim(),
    icon: (await page.textContent('[data-error="icon"]')).trim(),
    keptId: await page.inputValue('#f-id'),
    keptGrant: await page.isChecked(grant(TIME)),
  };
  step('validation errors beside the fields');

  // A new agent: two sets, one tool of the folder set denied; the panel follows.
  await page.fill('#f-name', 'Helper');
  await page.fill('#f-description', 'Tells the time and echoes.');
  await page.fill('#f-icon', 'clock');
  await page.check(grant(FOLDER));
  await panelIs(page, ['convert_timezone', 'echo', 'get_current_time', 'slow']);
  result.pages.overThreshold = await page.isVisible('[data-effective] .warn');
  await page.click(`${card(FOLDER)} summary`);
  await page.uncheck(allow(FOLDER, 'slow'));
  await panelIs(page, ['convert_timezone', 'echo', 'get_current_time']);
  result.pages.afterDeny = {
    panel: await panelTools(page),
    excluded: await page.$$eval('[data-excluded] li', (li) => li.map((x) => x.textContent.trim())),
    overThreshold: await page.isVisible('[data-effective] .warn'),
    folder: (await state(page))[FOLDER],
  };
  step('the panel follows the grants and the deny');

  // The filter and bulk toggles act on the shown rows only.
  await page.fill('[data-tool-search]', 'convert_weight');
  result.pages.filtered = await shownTools(page);
  await page.click('[data-bulk="on"]');
  await panelIs(page, ['convert_timezone', 'convert_weight', 'echo', 'get_current_time']);
  const afterBulk = await state(page);
  result.pages.bulk = { units: afterBulk[UNITS], folder: afterBulk[FOLDER] };
  await page.click('[data-bulk="off"]');
  await panelIs(page, ['convert_timezone', 'echo', 'get_current_time']);
  result.pages.bulkOff = (await state(page))[UNITS];
  // The units set is still granted, with no tool allowed: ungrant it with its switch.
  await page.fill('[data-tool-search]', '');
  await page.uncheck(grant(UNITS));
  // The category's tri-state: some of its sets granted.
  result.pages.category = await page.$$eval('[data-category]', (s) => s.map((x) => ({
    name: x.querySelector('h3').textContent.trim(),
    count: x.querySelector('[data-category-count]').textContent.trim(),
    indeterminate: x.querySelector('[data-category-toggle]').indeterminate,
  })));
  await page.selectOption(`${card(TIME)} select`, 'search');
  await shot('agent-form');
  step('filter, bulk and tri-state');

  // Save: to the agent's page, with a notice; a reload finds it intact.
  await Promise.all([page.waitForURL(/\/agents\/helper\?saved=1$/), page.click('[data-save]')]);
  result.pages.saved = (await page.textContent('[data-notice]')).trim();
  await page.goto(base + '/agents/helper');
  const reloaded = await state(page);
  result.pages.reloaded = {
    name: await page.inputValue('#f-name'),
    icon: await page.$eval('[data-icon-shown] use', (u) => u.getAttribute('href')),
    folder: reloaded[FOLDER],
    time: reloaded[TIME],
    units: reloaded[UNITS],
    panel: await panelTools(page),
  };
  step('saved and reloaded');

  // Two tabs edit it; both save. The second gets the conflict, its edits kept.
  const other = await t.newPage();
  await other.goto(base + '/agents/helper');
  await page.fill('#f-description', 'Changed in the first tab.');
  await Promise.all([page.waitForURL(/saved=1$/), page.click('[data-save]')]);
  await other.fill('#f-name', 'Helper B');
  await other.click(`${card(TIME)} summary`);
  await other.uncheck(allow(TIME, 'convert_timezone'));
  await panelIs(other, ['echo', 'get_current_time']);
  const conflict = await t.expect(() => Promise.all([other.waitForNavigation(), other.click('[data-save]')]));
  assert.equal(conflict[0].status(), 409);
  await html(other);
  result.pages.conflict = {
    status: conflict[0].status(),
    theirs: await other.$$eval('[data-theirs] li', (li) => li.map((x) => x.textContent.trim())),
    mine: await other.$$eval('[data-mine] li', (li) => li.map((x) => x.textContent.trim())),
    keptName: await other.inputValue('#f-name'),
    keptDeny: !(await other.isChecked(allow(TIME, 'convert_timezone'))),
    takeTheirs: await other.getAttribute('[data-take-theirs]', 'href'),
  };
  await shot('agent-conflict', other);
  await Promise.all([other.waitForURL(/saved=1$/), other.click('[data-save-over]')]);
  await other.goto(base + '/agents/helper');
  result.pages.savedOver = {
    name: await other.inputValue('#f-name'),
    description: await other.inputValue('#f-description'),
    time: (await state(other))[TIME],
  };
  await other.close();
  step('a concurrent edit is shown, then saved over');

  // Export as TOML; import it as a new agent (the form prefilled, saved on Save).
  await page.goto(base + '/agents/helper');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-export]')]);
  const exported = await readFile(await download.path(), 'utf8');
  result.exported = exported;
  result.exportName = download.suggestedFilename();
  await page.goto(base + '/agents/new');
  await page.fill('#import-toml', 'x = [');
  await t.expect(() => Promise.all([page.waitForNavigation(), page.click('[data-import] button[type=submit]')]));
  result.pages.importError = (await page.textContent('[data-error="import"]')).trim();
  await page.fill('#import-toml', exported.replaceAll('agents.helper', 'agents.helper-copy'));
  await Promise.all([page.waitForNavigation(), page.click('[data-import] button[type=submit]')]);
  const imported = await state(page);
  result.pages.imported = {
    notice: (await page.textContent('[data-notice]')).trim(),
    id: await page.inputValue('#f-id'),
    name: await page.inputValue('#f-name'),
    time: imported[TIME],
    folder: imported[FOLDER],
  };
  await Promise.all([page.waitForURL(/\/agents\/helper-copy\?saved=1$/), page.click('[data-save]')]);
  step('exported and imported');

  // toolhost.toml's agent: read-only.
  await page.goto(base + '/agents/filebot');
  result.pages.fileAgent = {
    readOnly: await page.isVisible('[data-read-only]'),
    disabled: await page.$eval('#agent-form fieldset', (f) => f.disabled),
    save: await page.$$eval('[data-save]', (b) => b.length),
    panel: await panelTools(page),
  };

  // Without JavaScript the form still saves.
  await t.cdp.send('Emulation.setScriptExecutionDisabled', { value: true });
  await page.goto(base + '/agents/new');
  await page.fill('#f-id', 'plain');
  await page.fill('#f-name', 'Plain');
  await page.check(grant(UNITS));
  await page.click(`${card(UNITS)} summary`);
  await page.uncheck(allow(UNITS, 'convert_volume'));
  await Promise.all([page.waitForURL(/\/agents\/plain\?saved=1$/), page.click('[data-save]')]);
  result.pages.noScript = {
    units: (await state(page))[UNITS],
    panel: await panelTools(page),
  };
  await t.cdp.send('Emulation.setScriptExecutionDisabled', { value: false });
  step('saves without JavaScript');

  // The keyboard: a set's switch takes Space, its focus shows, the panel follows.
  await page.goto(base + '/agents/new');
  await page.focus(grant(UNITS));
  await page.keyboard.press('Space');
  await panelIs(page, ['convert_distance', 'convert_temperature', 'convert_volume', 'convert_weight']);
  result.pages.keyboard = {
    granted: await page.isChecked(grant(UNITS)),
    outline: await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle),
    count: await page.textContent(`${card(UNITS)} [data-count]`),
  };
  step('keyboard');

  // Delete, confirmed.
  await page.goto(base + '/agents/plain');
  await page.click('details.danger summary');
  await page.check('#confirm-delete');
  await Promise.all([page.waitForURL(/\/agents\?deleted=plain$/), page.click('details.danger button[type=submit]')]);
  result.pages.afterDelete = await page.$$eval('[data-agent]', (li) => li.map((x) => x.dataset.agent));
  step('deleted');
});
