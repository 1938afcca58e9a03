// What every browser test of the console shares: Debian's Chromium through playwright-core,
// a page that fails the test on any script error or CSP violation, first-load budgets,
// screenshots, signing in, and the RESULT line the Rust side reads.
// Environment: CONSOLE_URL (http://127.0.0.1:PORT), CONSOLE_TOKEN (the admin's token),
// SCREENSHOTS (a folder for one PNG per page).
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';

const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/// Runs `body(t)` with a fresh browser; `name` prefixes the progress lines on stderr.
/// `t` holds: base, token, context, page, cdp, result, step(what), measure(path, name),
/// html(), shot(name), signIn(page?), newPage(), expect(fn) (error statuses expected).
/// Prints `RESULT {json}` on stdout and `NAME: ok` on stderr when `body` passed.
export async function run(name, body) {
  const base = process.env.CONSOLE_URL;
  const token = process.env.CONSOLE_TOKEN;
  const shots = process.env.SCREENSHOTS;
  assert.ok(base && token && shots, 'CONSOLE_URL, CONSOLE_TOKEN and SCREENSHOTS are required');
  mkdirSync(shots, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), 'toolhost-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  const result = { pages: {}, budgets: [] };
  const step = (what) => process.stderr.write(`${name}: ${what}\n`);
  const problems = [];
  let expecting = 0;
  const watch = (page) => {
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' && !(expecting > 0 && m.text().startsWith('Failed to load resource'))) {
        problems.push(`console error: ${m.text()}`);
      }
    });
    return page;
  };
  try {
    const page = watch(context.pages()[0] ?? (await context.newPage()));
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    const t = {
      base, token, context, page, cdp, result, step, problems,
      newPage: async () => watch(await context.newPage()),
      // Runs `fn` with error statuses expected (they are logged by the browser).
      expect: async (fn) => {
        expecting += 1;
        try { return await fn(); } finally { expecting -= 1; }
      },
      // What one page costs on a first load (no cache): every byte on the wire, the
      // HTML's compressed size, and the largest contentful paint.
      measure: async (path, pageName) => {
        await cdp.send('Network.clearBrowserCache');
        await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
        const response = await page.goto(base + path, { waitUntil: 'load' });
        await cdp.send('Network.setCacheDisabled', { cacheDisabled: false });
        const m = await page.evaluate(() => new Promise((resolve) => {
          const nav = performance.getEntriesByType('navigation')[0];
          const resources = performance.getEntriesByType('resource');
          const sizes = {
            total: nav.transferSize + resources.reduce((n, r) => n + r.transferSize, 0),
            html: nav.encodedBodySize,
            htmlDecoded: nav.decodedBodySize,
            requests: 1 + resources.length,
          };
          let lcp = null;
          new PerformanceObserver((list) => {
            const entries = list.getEntries();
            lcp = entries[entries.length - 1].startTime;
          }).observe({ type: 'largest-contentful-paint', buffered: true });
          setTimeout(() => resolve({ ...sizes, lcp }), 300);
        }));
        const encoding = (await response.allHeaders())['content-encoding'] ?? null;
        const entry = { page: pageName, path, ...m, encoding };
        result.budgets.push(entry);
        step(`${pageName}: ${JSON.stringify(entry)}`);
        return response;
      },
      // The page's HTML, checked never to hold the token.
      html: async (p = page) => {
        const text = await p.content();
        assert.ok(!text.includes(token), `the token is in the page at ${p.url()}`);
        return text;
      },
      shot: (shotName, p = page) => p.screenshot({ path: join(shots, `${shotName}.png`), fullPage: true }),
      // Signs in with the admin's token (or `as`) and lands on `/`.
      signIn: async (p = page, as = token) => {
        await p.goto(base + '/sign-in');
        await p.fill('#token', as);
        await Promise.all([p.waitForURL(base + '/'), p.click('button[type=submit]')]);
      },
    };
    await body(t);
    result.problems = problems;
    assert.deepEqual(problems, [], 'no script errors or CSP violations');
    console.log('RESULT ' + JSON.stringify(result));
    step('ok');
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
