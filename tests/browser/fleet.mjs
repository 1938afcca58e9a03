// The console's overview on a fleet's gateway, in a real Chromium: the fleet's gateways
// and runners with their load, versions and the catalog epoch, instead of the local
// sandbox (a gateway runs no tool process).
import assert from 'node:assert/strict';
import { run } from './harness.mjs';

await run('fleet', async (t) => {
  const { page, result, step, measure, shot } = t;
  await t.signIn();
  await measure('/', 'fleet-overview');
  result.nodes = await page.$$eval('#fleet-nodes tbody tr', (rows) =>
    rows.map((r) => ({
      node: r.getAttribute('data-node'),
      cells: [...r.querySelectorAll('td')].map((td) => td.textContent.replace(/\s+/g, ' ').trim()),
    })),
  );
  result.sandboxSection = await page.$('#sandbox') !== null;
  assert.ok(result.nodes.length > 0, 'the overview lists the fleet');
  await shot('fleet-overview');
  step('the overview shows the fleet');
});
