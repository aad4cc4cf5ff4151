// The chat page (runtime/server/web/chat.html) in a real browser, against a running server.
//
//   node tests/integration/chat_page.mjs BASE_URL OUT_DIR
//
// BASE_URL is the server's address (http://127.0.0.1:8080); OUT_DIR receives the screenshots.
// SWITCHYARD_API_KEY, when set, is the key the server wants: the browser starts with it
// stored, as a user who entered it before would. SWITCHYARD_CHAT_TIMEOUT_S bounds each wait
// (default 120). Needs Debian's Chromium (/usr/bin/chromium) and `npm ci` in tests/node
// (scripts/setup does both). Exits 0 when every check passed, 1 naming the first that failed.
//
// The model is a tiny test model that writes gibberish, so no check names its words: the
// streamed answer the page shows is compared with the non-streamed answer the server gives
// to the same greedy request, which must be identical.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../node/package.json', import.meta.url));
let chromium;
try {
  ({ chromium } = require('playwright-core'));
} catch {
  console.error('chat_page: playwright-core is not installed: run scripts/setup (it runs npm ci in tests/node).');
  process.exit(1);
}

const CHROMIUM = '/usr/bin/chromium';
const VIEWPORT = { width: 1100, height: 800 };
const TIMEOUT_MS = 1000 * Number(process.env.SWITCHYARD_CHAT_TIMEOUT_S || 120);
// Greedy and short: the answer is a function of the prompt, and quick on any machine.
const GREEDY = { temperature: 0, seed: 7, maxTokens: 24 };

const [baseArg, outDir] = process.argv.slice(2);
if (!baseArg || !outDir) {
  console.error('usage: node chat_page.mjs BASE_URL OUT_DIR   (e.g. http://127.0.0.1:8080 /tmp/shots)');
  process.exit(2);
}
const base = baseArg.replace(/\/+$/, '');
const apiKey = process.env.SWITCHYARD_API_KEY || '';

class CheckFailed extends Error {}
let passed = 0;
function check(cond, message) {
  if (!cond) throw new CheckFailed(message);
  passed++;
  console.log(`ok - ${message.split('\n')[0]}`);
}
const show = (s) => JSON.stringify(s.length > 200 ? s.slice(0, 200) + '…' : s);

function serverHeaders(extra = {}) {
  return apiKey ? { ...extra, Authorization: `Bearer ${apiKey}` } : extra;
}

async function serverJson(method, url, body) {
  let resp;
  try {
    resp = await fetch(base + url, {
      method,
      headers: serverHeaders(body ? { 'Content-Type': 'application/json' } : {}),
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch (e) {
    throw new CheckFailed(`${method} ${base + url} could not be sent (${e.cause?.message || e.cause?.code || e.message}): is the server running there?`);
  }
  const text = await resp.text();
  if (!resp.ok) {
    const hint = resp.status === 401 ? ' (a server that wants a key needs SWITCHYARD_API_KEY set for this test)' : '';
    throw new CheckFailed(`${method} ${url} answered HTTP ${resp.status}${hint}: ${text.slice(0, 500)}`);
  }
  try { return JSON.parse(text); } catch {
    throw new CheckFailed(`${method} ${url} answered with a body that is not JSON: ${text.slice(0, 200)}`);
  }
}

// The same request the page sent, asked for without streaming.
async function nonStreamed(pageBody) {
  const body = { ...pageBody, stream: false };
  delete body.stream_options;
  const json = await serverJson('POST', '/v1/chat/completions', body);
  const message = json.choices?.[0]?.message;
  if (!message || typeof message.content !== 'string') {
    throw new CheckFailed(`the non-streamed answer has no choices[0].message.content: ${JSON.stringify(json).slice(0, 300)}`);
  }
  return { content: message.content, reasoning: message.reasoning_content || '', usage: json.usage };
}

function checkPng(file) {
  check(fs.existsSync(file), `the screenshot ${file} was written`);
  const bytes = fs.readFileSync(file);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  check(bytes.subarray(0, 8).equals(signature), `${path.basename(file)} is a PNG file`);
  const width = bytes.readUInt32BE(16);
  const height = bytes.readUInt32BE(20);
  check(width === VIEWPORT.width && height === VIEWPORT.height,
    `${path.basename(file)} is ${VIEWPORT.width}x${VIEWPORT.height} (it is ${width}x${height})`);
  // A blank page of this size compresses to well under 10 kB; text and borders make it more.
  check(bytes.length > 10000, `${path.basename(file)} is not a blank page (${bytes.length} bytes)`);
}

async function main() {
  fs.mkdirSync(outDir, { recursive: true });
  check(fs.existsSync(CHROMIUM), `Debian's Chromium is at ${CHROMIUM} (apt-get install chromium; scripts/setup does it)`);

  const models = await serverJson('GET', '/v1/models');
  const served = models.data?.[0];
  check(served && typeof served.id === 'string', 'GET /v1/models lists a model');
  const expectedPipeline = served.meta?.pipeline || 'unknown';

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    // A fresh profile every run (Playwright's temporary one); a stored key is set the way
    // the page itself stores it.
    const origin = new URL(base).origin;
    const context = await browser.newContext({
      viewport: VIEWPORT,
      storageState: apiKey
        ? { cookies: [], origins: [{ origin, localStorage: [{ name: 'switchyard.apiKey', value: apiKey }] }] }
        : undefined,
    });
    context.setDefaultTimeout(TIMEOUT_MS);
    const page = await context.newPage();
    await runChecks(page, context, served, expectedPipeline);
  } finally {
    await browser.close();
  }
}

async function runChecks(page, context, served, expectedPipeline) {
  // Every console error counts, except the browser's own line for a request the test
  // makes fail on purpose.
  const consoleErrors = [];
  let expectingFailures = false;
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    if (expectingFailures && m.text().startsWith('Failed to load resource')) return;
    consoleErrors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => consoleErrors.push(`uncaught: ${e.message}`));
  const chatRequests = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && new URL(r.url()).pathname === '/v1/chat/completions') {
      chatRequests.push({ body: r.postDataJSON(), headers: r.headers() });
    }
  });
  const noConsoleErrors = (when) =>
    check(consoleErrors.length === 0, `no console errors ${when}` +
      (consoleErrors.length ? `; there were:\n  ${consoleErrors.join('\n  ')}` : ''));

  const failShot = async () => {
    try { await page.screenshot({ path: path.join(outDir, 'failure.png') }); } catch { /* best effort */ }
  };

  try {
    const resp = await page.goto(base + '/');
    check(resp && resp.status() === 200, `GET / answers 200 (it answered ${resp && resp.status()})`);
    check((resp.headers()['content-type'] || '').startsWith('text/html'),
      `GET / is served as text/html (it is '${resp.headers()['content-type']}')`);

    // --- header: model and pipeline ---
    await page.waitForFunction(() => !/loading/.test(document.getElementById('model').textContent));
    const shownModel = await page.textContent('#model');
    const shownPipeline = await page.textContent('#pipeline');
    check(shownModel === served.id, `the header shows the model id ${show(served.id)} (it shows ${show(shownModel)})`);
    check(shownPipeline === expectedPipeline,
      `the header shows the pipeline ${show(expectedPipeline)} (it shows ${show(shownPipeline)})`);
    check(await page.isHidden('#error'), 'no error is shown after loading');

    // --- Shift+Enter is a newline, not a send ---
    await page.click('#options summary');
    await page.fill('#max-tokens', String(GREEDY.maxTokens));
    await page.fill('#temperature', String(GREEDY.temperature));
    await page.fill('#seed', String(GREEDY.seed));
    await page.click('#prompt');
    await page.keyboard.type('Hello there.');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('Tell me about trains.');
    check((await page.inputValue('#prompt')) === 'Hello there.\nTell me about trains.',
      'Shift+Enter puts a newline in the prompt');
    check((await page.locator('.msg').count()) === 0, 'Shift+Enter sends nothing');

    // --- Enter sends; the answer streams and finishes ---
    // Counts the answer's updates: more than one means it was shown piece by piece.
    await page.evaluate(() => {
      window.__answerUpdates = 0;
      new MutationObserver((records) => {
        for (const r of records) {
          if (r.target.matches?.('.msg.assistant .content')) window.__answerUpdates++;
        }
      }).observe(document.getElementById('messages'), { childList: true, subtree: true, characterData: true });
    });
    await page.keyboard.press('Enter');
    const answer1 = page.locator('.msg.assistant').nth(0);
    await page.waitForFunction(() => {
      const a = document.querySelector('.msg.assistant');
      return a && (a.querySelector('.content').textContent !== '' || a.dataset.state !== 'streaming');
    });
    check((await answer1.locator('.content').textContent()) !== '', 'the streamed answer is not empty');
    await page.waitForFunction(() => document.querySelector('.msg.assistant').dataset.state !== 'streaming');
    const state1 = await answer1.getAttribute('data-state');
    check(state1 === 'done', `the answer finishes with data: [DONE] (its state is '${state1}'` +
      (state1 !== 'done' ? `; the page says ${show(await page.textContent('#error'))})` : ')'));
    check(await page.isEnabled('#send') && await page.isDisabled('#stop'), 'Send is ready again and Stop is off');
    check((await page.locator('.msg.user .content').first().textContent()) === 'Hello there.\nTell me about trains.',
      'the user message is shown as typed');

    check(chatRequests.length === 1, `the page sent one chat request (it sent ${chatRequests.length})`);
    const sent1 = chatRequests[0].body;
    check(sent1.model === served.id && sent1.stream === true && sent1.stream_options?.include_usage === true,
      'the request names the model and asks for a stream with usage');
    check(sent1.temperature === GREEDY.temperature && sent1.seed === GREEDY.seed && sent1.max_tokens === GREEDY.maxTokens,
      'the request carries the sampling options typed in');
    check(sent1.messages.length === 1 && sent1.messages[0].role === 'user', 'the request holds the one user message');

    const shown1 = await answer1.locator('.content').textContent();
    const ref1 = await nonStreamed(sent1);
    check(ref1.content !== '', 'the model\'s greedy answer is not empty');
    check(shown1 === ref1.content,
      `the streamed answer shown equals the non-streamed answer\n  shown:    ${show(shown1)}\n  expected: ${show(ref1.content)}`);
    check(((await page.textContent('#messages')) || '').includes(ref1.content), 'the page text contains the answer');
    const updates = await page.evaluate(() => window.__answerUpdates);
    check(updates >= 2, `the answer was shown piece by piece as it streamed (${updates} updates)`);
    await checkReasoning(answer1, ref1.reasoning);
    const meta1 = await answer1.locator('.meta').textContent();
    if (ref1.usage && Number.isInteger(ref1.usage.completion_tokens)) {
      check(meta1.includes(`${ref1.usage.completion_tokens} completion`),
        `the usage line shows ${ref1.usage.completion_tokens} completion tokens (it says ${show(meta1)})`);
    } else {
      check(meta1 !== '', `a usage line is shown (${show(meta1)})`);
    }

    // --- the screenshot, and the answer in view ---
    const shot1 = path.join(outDir, 'chat-answer.png');
    await page.screenshot({ path: shot1 });
    checkPng(shot1);
    const geometry = await answer1.evaluate((el) => {
      const r = el.getBoundingClientRect();
      return { top: r.top, bottom: r.bottom, left: r.left, right: r.right,
        visible: el.checkVisibility({ opacityProperty: true, visibilityProperty: true }),
        vw: window.innerWidth, vh: window.innerHeight };
    });
    check(geometry.visible, 'the answer is visible');
    check(geometry.left >= 0 && geometry.right <= geometry.vw && geometry.bottom > 0 && geometry.bottom <= geometry.vh &&
          (geometry.bottom - geometry.top > geometry.vh || geometry.top >= 0),
    `the answer lies within the viewport (${JSON.stringify(geometry)})`);
    noConsoleErrors('while answering');

    // --- Stop: the partial answer stays, and the page is ready again ---
    // The network is slowed to a trickle so that Stop surely lands mid-stream, however
    // fast the model is.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions',
      { offline: false, latency: 0, downloadThroughput: 600, uploadThroughput: -1 });
    await page.fill('#max-tokens', '200');
    await page.fill('#prompt', 'Now a longer one, please.');
    await page.click('#send');
    const answer2 = page.locator('.msg.assistant').nth(1);
    await page.waitForFunction(() => {
      const a = document.querySelectorAll('.msg.assistant')[1];
      return a && (a.querySelector('.content').textContent !== '' || a.dataset.state !== 'streaming');
    });
    const before = await answer2.getAttribute('data-state');
    check(before === 'streaming', `the second answer is still streaming when Stop is clicked (its state is '${before}')`);
    check(await page.isEnabled('#stop') && await page.isDisabled('#send'), 'while streaming, Stop is on and Send is off');
    await page.click('#stop');
    await page.waitForFunction(() => document.querySelectorAll('.msg.assistant')[1].dataset.state !== 'streaming');
    await cdp.send('Network.emulateNetworkConditions',
      { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    const state2 = await answer2.getAttribute('data-state');
    check(state2 === 'stopped', `the stopped answer is marked stopped (its state is '${state2}')`);
    const partial = await answer2.locator('.content').textContent();
    check(partial !== '', 'the partial answer stays on the page');
    await page.waitForTimeout(1000);
    check((await answer2.locator('.content').textContent()) === partial, 'the partial answer does not grow after Stop');
    check(await page.isEnabled('#send') && await page.isDisabled('#stop') && await page.isEditable('#prompt'),
      'after Stop, Send and the prompt are ready and Stop is off');
    check(await page.isHidden('#error'), 'Stop shows no error');
    const ref2 = await nonStreamed(chatRequests[1].body);
    check(ref2.content.startsWith(partial) && partial.length < ref2.content.length,
      `the partial answer is a proper beginning of the full answer\n  partial: ${show(partial)}\n  full:    ${show(ref2.content)}`);

    // --- the conversation goes on after Stop ---
    await page.fill('#max-tokens', '8');
    await page.fill('#prompt', 'And one more.');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => {
      const a = document.querySelectorAll('.msg.assistant')[2];
      return a && a.dataset.state !== 'streaming';
    });
    const state3 = await page.locator('.msg.assistant').nth(2).getAttribute('data-state');
    check(state3 === 'done', `an answer after Stop streams to the end (its state is '${state3}')`);
    const history = chatRequests[2].body.messages;
    check(history.length === 5 && history.map((m) => m.role).join() === 'user,assistant,user,assistant,user',
      'the next request carries the whole conversation');
    check(history[1].content === ref1.content && history[3].content === partial,
      'the conversation holds the first answer and the partial one as shown');
    noConsoleErrors('around Stop');
    await page.screenshot({ path: path.join(outDir, 'chat-stopped.png') });

    // --- what the server cannot be made to do on demand, with mocked answers ---
    await mockedChecks(page, served, () => { expectingFailures = true; }, () => { expectingFailures = false; });
    noConsoleErrors('in the rest of the test');
  } catch (e) {
    await failShot();
    throw e;
  }
}

// Reasoning, when the answer has some, is inside a closed details element above the answer.
async function checkReasoning(answer, expected) {
  const details = answer.locator('details.reasoning');
  const count = await details.count();
  if (!expected) {
    check(count === 0, 'an answer without reasoning shows no reasoning element');
    return;
  }
  check(count === 1, 'the reasoning is shown in a details element');
  check(!(await details.evaluate((d) => d.open)), 'the reasoning is folded away (details closed)');
  check(!(await answer.locator('.reasoning-text').isVisible()), 'the folded reasoning text is not visible');
  const text = await answer.locator('.reasoning-text').textContent();
  check(text === expected, `the reasoning shown equals the reasoning sent\n  shown:    ${show(text)}\n  expected: ${show(expected)}`);
  check((await answer.locator('details.reasoning .content').count()) === 0, 'the answer is not inside the reasoning');
}

function sse(events) {
  return events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join('');
}
const chunk = (delta, extra = {}) => ({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }], ...extra });

async function mockedChecks(page, served, expectFailures, stopExpecting) {
  let routeHeaders = null;
  let reply = null;
  await page.route('**/v1/chat/completions', async (route) => {
    routeHeaders = route.request().headers();
    await route.fulfill(reply);
  });

  await page.click('#new-chat');
  check((await page.locator('.msg').count()) === 0 && await page.isHidden('#error'), 'New chat empties the conversation');

  // A reasoning model's answer: the reasoning folded, the answer shown.
  reply = {
    status: 200, headers: { 'content-type': 'text/event-stream' },
    body: sse([chunk({ role: 'assistant', content: '' }), chunk({ reasoning_content: 'Let me ' }),
      chunk({ reasoning_content: 'think <b>hard</b>.' }), chunk({ content: 'The answer ' }), chunk({ content: 'is <i>42</i>.' }),
      { object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      { object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 } },
      '[DONE]']),
  };
  await page.fill('#prompt', 'Think first.');
  await page.click('#send');
  await page.waitForFunction(() => document.querySelector('.msg.assistant')?.dataset.state === 'done');
  const answer = page.locator('.msg.assistant').first();
  check((await answer.locator('.content').textContent()) === 'The answer is <i>42</i>.',
    'markup in an answer is shown as text, not rendered');
  check((await answer.locator('i, b').count()) === 0, 'no element is made from the model\'s text');
  await checkReasoning(answer, 'Let me think <b>hard</b>.');
  await answer.locator('details.reasoning summary').click();
  check(await answer.locator('.reasoning-text').isVisible(), 'clicking the reasoning summary unfolds it');
  check((await answer.locator('.meta').textContent()).includes('9 completion'), 'the usage of a mocked answer is shown');
  await page.screenshot({ path: path.join(outDir, 'chat-reasoning.png') });

  // A non-200 JSON error: its message is shown, and the prompt is given back.
  expectFailures();
  reply = { status: 400, contentType: 'application/json',
    body: JSON.stringify({ error: { message: 'The field max_tokens must be positive.', type: 'invalid_request_error' } }) };
  await page.fill('#prompt', 'This one fails.');
  await page.click('#send');
  await page.waitForSelector('#error:not([hidden])');
  const error1 = await page.textContent('#error');
  check(error1.includes('The field max_tokens must be positive.') && error1.includes('400'),
    `an HTTP error's message is shown (${show(error1)})`);
  check((await page.inputValue('#prompt')) === 'This one fails.', 'the unanswered prompt is given back to the prompt box');
  check((await page.locator('.msg.assistant').count()) === 1, 'a failed request leaves no empty answer behind');
  check((await page.locator('.msg.user.failed').count()) === 1, 'the unanswered message is marked as such');
  check(await page.isEnabled('#send') && await page.isDisabled('#stop'), 'after an error, Send is ready again');
  await page.screenshot({ path: path.join(outDir, 'chat-error.png') });
  stopExpecting();

  // An error inside the stream: shown, and the text that came before it kept.
  reply = { status: 200, headers: { 'content-type': 'text/event-stream' },
    body: sse([chunk({ content: 'Half an ans' }), { error: { message: 'The model failed in the middle of the answer.' } }]) };
  await page.fill('#prompt', 'Fail midway.');
  await page.click('#send');
  await page.waitForFunction(() => [...document.querySelectorAll('.msg.assistant')].pop().dataset.state === 'error');
  const error2 = await page.textContent('#error');
  check(error2.includes('The model failed in the middle of the answer.'), `an error chunk in the stream is shown (${show(error2)})`);
  check((await page.locator('.msg.assistant .content').last().textContent()) === 'Half an ans',
    'the text before a stream error stays');

  // The API key: stored, sent as a Bearer token, kept across a reload, removable.
  const previousKey = await page.inputValue('#api-key');
  await page.route('**/v1/models', async (route) => {
    await route.fulfill({ status: 200, contentType: 'application/json',
      body: JSON.stringify({ object: 'list', data: [served] }) });
  });
  await page.fill('#api-key', 'sk-chat-page-test');
  await page.press('#api-key', 'Tab');
  reply = { status: 200, headers: { 'content-type': 'text/event-stream' },
    body: sse([chunk({ content: 'ok' }), '[DONE]']) };
  await page.fill('#prompt', 'With a key.');
  await page.click('#send');
  await page.waitForFunction(() => [...document.querySelectorAll('.msg.assistant')].pop().dataset.state === 'done');
  check(routeHeaders.authorization === 'Bearer sk-chat-page-test', 'the API key is sent as a Bearer token');
  check(await page.isHidden('#error'), 'a successful answer clears the previous error');
  await page.reload();
  await page.waitForFunction(() => !/loading/.test(document.getElementById('model').textContent));
  check((await page.inputValue('#api-key')) === 'sk-chat-page-test', 'the API key is kept across a reload');
  await page.fill('#api-key', '');
  await page.press('#api-key', 'Tab');
  reply = { status: 200, headers: { 'content-type': 'text/event-stream' }, body: sse([chunk({ content: 'ok' }), '[DONE]']) };
  await page.fill('#prompt', 'Without a key.');
  await page.click('#send');
  await page.waitForFunction(() => document.querySelector('.msg.assistant')?.dataset.state === 'done');
  check(!('authorization' in routeHeaders), 'with the key field empty, no Authorization header is sent');
  check(await page.evaluate(() => localStorage.getItem('switchyard.apiKey')) === null, 'an emptied key is removed from storage');
  if (previousKey) {
    await page.fill('#api-key', previousKey);
    await page.press('#api-key', 'Tab');
  }
  await page.unrouteAll({ behavior: 'wait' });
}

main().then(() => {
  console.log(`chat_page: ${passed} passed, 0 failed`);
  process.exit(0);
}, (e) => {
  if (e instanceof CheckFailed) {
    console.error(`not ok - ${e.message}`);
  } else {
    console.error(`chat_page: the test itself failed: ${e && e.stack ? e.stack : e}`);
  }
  console.log(`chat_page: ${passed} passed, 1 failed`);
  process.exit(1);
});
