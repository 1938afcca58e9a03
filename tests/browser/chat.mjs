// The chat in a real Chromium against a real `toolhost serve`, talking to a scripted fake
// chat-completions server started here on loopback. It speaks OpenAI's wire format as the
// real one streams it (server-sent `data:` chunks of `choices[0].delta`, tool calls in
// fragments by `index`, `finish_reason`, `data: [DONE]`) and records every request.
// Needs AGENT (the agent to chat as; granted `echo` and `slow`).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { run } from './harness.mjs';

const agent = process.env.AGENT;
assert.ok(agent, 'AGENT is required');
const KEY = 'sk-test-chat-key-0123456789';

// The script: what the fake model answers, by what the conversation ends with.
const requests = [];
const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'fake-1',
    choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
async function answer(body, res) {
  const last = body.messages[body.messages.length - 1];
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (s) => res.write(s);
  if (last.role === 'tool') {
    for (const piece of ['The tool ', 'answered: ', last.content]) {
      send(chunk({ content: piece }));
      await pause(20);
    }
    send(chunk({}, 'stop'));
  } else if (/slow/.test(last.content)) {
    send(chunk({ role: 'assistant', content: 'Starting the slow one.' }));
    send(chunk({ tool_calls: [{ index: 0, id: 'call_slow', type: 'function', function: { name: 'slow', arguments: '' } }] }));
    send(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"steps": 40, "delay_ms": 250}' } }] }));
    send(chunk({}, 'tool_calls'));
  } else {
    send(chunk({ role: 'assistant', content: 'Let me ' }));
    await pause(20);
    send(chunk({ content: 'echo that.' }));
    send(chunk({ tool_calls: [{ index: 0, id: 'call_echo', type: 'function', function: { name: 'echo', arguments: '{"te' } }] }));
    await pause(20);
    send(chunk({ tool_calls: [{ index: 0, function: { arguments: 'xt": "hello from chat"}' } }] }));
    send(chunk({}, 'tool_calls'));
  }
  send('data: [DONE]\n\n');
  res.end();
}
const fake = createServer((req, res) => {
  let raw = '';
  req.on('data', (d) => { raw += d; });
  req.on('end', () => {
    const body = JSON.parse(raw);
    requests.push({ path: req.url, authorization: req.headers.authorization, body });
    answer(body, res).catch((e) => { console.error(e); res.end(); });
  });
});
await new Promise((r) => fake.listen(0, '127.0.0.1', r));
const modelUrl = `http://127.0.0.1:${fake.address().port}/v1`;

try {
  await run('chat', async (t) => {
    const { base, page, result, step, measure, html, shot } = t;
    await t.signIn();

    // No model yet: the chat says so and links the settings.
    await page.goto(base + '/chat');
    assert.match(await page.textContent('#main'), /No chat model is configured/);
    await page.goto(base + '/chat/settings');
    // A bad URL is refused beside the field.
    await page.fill('#base_url', 'ftp://nowhere');
    await page.fill('#model', 'fake-1');
    await t.expect(() => Promise.all([page.waitForNavigation(), page.click('form.form button[type=submit]')]));
    assert.match(await page.textContent('#base_url-error'), /http:\/\/ or https:\/\//);
    await page.fill('#base_url', modelUrl);
    await page.fill('#api_key', KEY);
    await Promise.all([page.waitForURL(/\/chat\?saved=1$/), page.click('form.form button[type=submit]')]);
    await html();
    // The key is never shown again.
    await page.goto(base + '/chat/settings');
    assert.ok(!(await page.content()).includes(KEY), 'the key is not in the settings page');
    assert.match(await page.getAttribute('#api_key', 'placeholder'), /a key is stored/);
    step('the model is configured');

    await measure(`/chat/${agent}`, 'chat');
    await html();
    result.pages.offered = await page.$$eval('.tools-offered li', (l) => l.map((x) => x.textContent.trim()));

    // A message: streamed text, a tool card that goes to completed, then the answer.
    await page.fill('#prompt', 'please echo something');
    await page.click('#send');
    const echoCard = page.locator('.tool-card[data-tool="echo"]');
    await echoCard.waitFor();
    const states = new Set();
    for (const deadline = Date.now() + 15000; Date.now() < deadline;) {
      const s = await echoCard.getAttribute('data-state');
      states.add(s);
      if (s === 'completed' || s === 'error') break;
      await pause(10);
    }
    await page.waitForSelector('.msg.assistant >> text=The tool answered');
    await page.waitForFunction(() => !document.getElementById('send').disabled);
    await echoCard.locator('details').last().locator('summary').click();
    result.pages.echo = {
      finalState: await echoCard.getAttribute('data-state'),
      states: [...states],
      stateLabel: (await echoCard.locator('.state').textContent()).trim(),
      result: (await echoCard.locator('details').last().textContent()).trim(),
      icon: await echoCard.locator('.head > svg use').getAttribute('href'),
      assistant: await page.$$eval('.msg.assistant .text', (m) => m.map((x) => x.textContent)),
    };
    await echoCard.locator('details').first().locator('summary').click();
    result.pages.echo.params = (await echoCard.locator('details').first().locator('pre').textContent()).trim();
    await shot('chat');
    step('a tool card went to completed');

    // A slow tool: running with progress, then Stop cancels it.
    await page.fill('#prompt', 'now the slow one');
    await page.click('#send');
    const slowCard = page.locator('.tool-card[data-tool="slow"]');
    await slowCard.waitFor();
    await page.waitForSelector('.tool-card[data-tool="slow"][data-state="running"]');
    await page.waitForFunction(() => /step [2-9] of 40/.test(document.querySelector('.tool-card[data-tool="slow"] .progress')?.textContent ?? ''));
    result.pages.slow = { progress: (await slowCard.locator('.progress').textContent()).trim() };
    await shot('chat-running');
    await page.click('#stop');
    await page.waitForFunction(() => !document.getElementById('send').disabled);
    result.pages.slow.afterStop = (await slowCard.locator('.state').textContent()).trim();
    await shot('chat-stopped');
    step('Stop cancelled the running tool');

    result.requests = requests.map((r) => ({
      path: r.path,
      authorization: r.authorization,
      model: r.body.model,
      stream: r.body.stream,
      tools: (r.body.tools ?? []).map((x) => x.function.name),
      roles: r.body.messages.map((m) => m.role),
      last: r.body.messages[r.body.messages.length - 1],
    }));
  });
} finally {
  fake.close();
}
