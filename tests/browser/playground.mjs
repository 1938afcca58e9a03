// The playground and the history in a real Chromium, run by
// crates/toolhost/tests/console_playground.rs against `toolhost serve` with its store and
// the fixture tools (echo, slow, and the test's own `ticker`). Prints `RESULT {json}`:
// what the pages showed, the progress seen, and how long each progress update took from
// the tool (which puts Date.now() in its message) to the screen.
import assert from 'node:assert/strict';
import { run } from './harness.mjs';

await run('playground', async (t) => {
  const { base, page, result, step, measure, html, shot } = t;
  let callsSent = 0;
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.url().endsWith('/api/v1/calls')) callsSent += 1;
  });
  const field = (name) => `[data-field="${name}"] input, [data-field="${name}"] select, [data-field="${name}"] textarea`;
  const fieldError = (name) => page.textContent(`[data-field="${name}"] .field-error`);
  const resultOf = async () => {
    await page.waitForSelector('[data-result] .result');
    return page.$eval('[data-result] .result', (r) => ({
      outcome: r.dataset.outcome,
      text: (r.querySelector('pre') || r).textContent,
    }));
  };
  await t.signIn();

  // echo: a required field left empty is refused beside it, and nothing is sent.
  await measure('/playground', 'playground-picker');
  await page.selectOption('#pick-tool', 'echo');
  await Promise.all([page.waitForURL(/tool=echo/), page.click('form.picker button')]);
  await html();
  await page.click('[data-run-button]');
  const echoRequired = (await fieldError('text')).trim();
  assert.match(echoRequired, /required/);
  await page.fill(field('text'), 'hello');
  await page.click('[data-run-button]');
  const echo = await resultOf();
  assert.equal(echo.text, 'hello');
  assert.equal(echo.outcome, 'success');
  step('echo ran');

  // slow: a bad number and broken JSON are refused before sending.
  const sentBefore = callsSent;
  await measure('/playground?tool=slow', 'playground');
  await html();
  await shot('playground');
  assert.equal(await page.inputValue(field('delay_ms')), '50', 'the default is filled in');
  await page.fill(field('steps'), 'abc');
  await page.click('[data-run-button]');
  const slowNumber = (await fieldError('steps')).trim();
  assert.match(slowNumber, /not a number/);
  await shot('playground-invalid');
  await page.fill(field('steps'), '5');
  await page.click('[data-toggle]');
  await page.waitForSelector('#raw', { state: 'visible' });
  assert.deepEqual(JSON.parse(await page.inputValue('#raw')), { steps: 5, delay_ms: 50 });
  await page.fill('#raw', '{"steps": 5,');
  await page.click('[data-run-button]');
  const rawJson = (await page.textContent('#err-raw')).trim();
  assert.match(rawJson, /line 1, column/);
  await page.fill('#raw', '{"steps": 5, "delay_ms": 300}');
  await page.click('[data-toggle]');
  await page.waitForSelector(field('steps'), { state: 'visible' });
  assert.equal(await page.inputValue(field('delay_ms')), '300');
  result.pages.validation = { callsSent: callsSent - sentBefore, echoRequired, slowNumber, rawJson };
  step('validation refuses bad values');

  // slow, 5 steps of 300 ms: every message and bar position seen, then the result.
  await page.evaluate(() => {
    const msg = document.querySelector('[data-progress-message]');
    const bar = document.querySelector('[data-progress]');
    window.__seen = { messages: [], bars: [] };
    new MutationObserver(() => {
      window.__seen.messages.push(msg.textContent);
      window.__seen.bars.push(bar.hasAttribute('value') ? bar.value / bar.max : null);
    }).observe(msg, { childList: true, characterData: true, subtree: true });
  });
  await page.click('[data-run-button]');
  await page.waitForFunction(() => /^step [23] of 5/.test(document.querySelector('[data-progress-message]').textContent));
  await shot('playground-running');
  const slow = await resultOf();
  await shot('playground-result');
  const seen = await page.evaluate(() => window.__seen);
  result.pages.slow = {
    ...seen, outcome: slow.outcome, result: slow.text,
    elapsed: (await page.textContent('[data-elapsed]')).trim(),
  };
  step(`slow ran: ${JSON.stringify(result.pages.slow)}`);

  // Another run, cancelled.
  await page.fill(field('steps'), '50');
  await page.fill(field('delay_ms'), '200');
  await page.click('[data-run-button]');
  await page.waitForFunction(() => /^step [2-9] of 50/.test(document.querySelector('[data-progress-message]').textContent));
  await page.click('[data-cancel]');
  const cancelled = await resultOf();
  await shot('playground-cancelled');
  result.pages.cancel = cancelled;
  step('cancelled');

  // ticker: how long from the tool's Date.now() to the DOM, and to the next frame.
  await page.goto(base + '/playground?tool=ticker');
  await page.fill(field('steps'), '20');
  await page.evaluate(() => {
    const msg = document.querySelector('[data-progress-message]');
    window.__lat = { dom: [], frame: [] };
    new MutationObserver(() => {
      const now = Date.now();
      const m = /sent at (\d+)/.exec(msg.textContent);
      if (!m) return;
      const sent = Number(m[1]);
      window.__lat.dom.push(now - sent);
      requestAnimationFrame(() => window.__lat.frame.push(Date.now() - sent));
    }).observe(msg, { childList: true, characterData: true, subtree: true });
  });
  await page.click('[data-run-button]');
  const ticks = await resultOf();
  result.pages.latency = { ...(await page.evaluate(() => window.__lat)), result: ticks.text };
  step(`progress latency: ${JSON.stringify(result.pages.latency)}`);

  // History: wait for the four rows (the log is written off the call path).
  const rows = () => page.$$eval('ul.calls[aria-label="Calls"] > li', (items) => items.map((li) => {
    const tool = li.querySelector('.tool').textContent.trim();
    const count = li.querySelector('.count');
    return count ? `${tool} ${count.textContent.trim()}` : tool;
  }));
  for (let i = 0; ; i += 1) {
    await page.goto(base + '/history');
    if ((await page.$$('a.call')).length >= 4) break;
    assert.ok(i < 50, 'the calls reached the history');
    await page.waitForTimeout(100);
  }
  await measure('/history', 'history');
  await html();
  const historyRows = await rows();
  await page.click('li.group summary');
  await shot('history');
  await page.selectOption('#f-status', 'cancelled');
  await Promise.all([page.waitForURL(/status=cancelled/), page.click('form.filters button')]);
  const cancelledRows = await rows();
  await shot('history-cancelled');
  result.pages.history = { rows: historyRows, cancelled: cancelledRows };
  step('history');

  // The detail of the successful slow run, and Replay.
  await page.goto(base + '/history?tool=slow&status=success');
  const href = await page.getAttribute('a.call', 'href');
  await measure(href, 'call-detail');
  await html();
  result.pages.detail = {
    arguments: await page.textContent('[data-arguments]'),
    result: (await page.textContent('[data-result] pre')).trim(),
    status: (await page.textContent('h1 [data-status]')).trim(),
    surface: await page.$$eval('dl.facts dt', (dts) => {
      const dt = dts.find((d) => d.textContent.trim() === 'Surface');
      return dt ? dt.nextElementSibling.textContent.trim() : null;
    }),
  };
  await shot('call-detail');
  await Promise.all([page.waitForURL(/\/playground\?/), page.click('[data-replay]')]);
  await page.waitForSelector(field('steps'));
  result.pages.replay = {
    steps: await page.inputValue(field('steps')),
    delay: await page.inputValue(field('delay_ms')),
    url: page.url(),
  };
  await shot('playground-replay');
  await measure(new URL(page.url()).pathname + new URL(page.url()).search, 'playground-replay');
  step('detail and replay');

  // Another user, who may only read: none of the admin's calls, not even by their id, and
  // no Run.
  const reader = process.env.READER_TOKEN;
  assert.ok(reader, 'READER_TOKEN is required');
  await page.goto(base + '/');
  await Promise.all([page.waitForURL(/\/sign-in$/), page.click('form[action="/sign-out"] button')]);
  await t.signIn(page, reader);
  await page.goto(base + '/history');
  const readerRows = (await page.$$('a.call')).length;
  const detail = await t.expect(() => page.goto(base + href));
  const callId = href.split('/').pop();
  await page.goto(`${base}/playground?tool=slow&replay=${callId}`);
  result.pages.reader = {
    rows: readerRows,
    detailStatus: detail.status(),
    replay: (await page.textContent('[role=alert]')).trim(),
    runDisabled: await page.isDisabled('[data-run-button]'),
    steps: await page.inputValue(field('steps')),
  };
  step(`another user: ${JSON.stringify(result.pages.reader)}`);
});
