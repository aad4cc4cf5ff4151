// The server as the official `openai` npm client sees it. Usage:
//   node openai_client.mjs MODE BASE_URL MODEL_ID [ARGS...]
// MODE api       plain, streaming, stop strings, logprobs, completions, tokenize, errors
//      tools     a scripted tool call (script sampler): parsed, streamed, and sent back
//      reasoning a scripted <think> block split into reasoning_content
//      limits    one slot, one waiting place, a 2 s request timeout: a full queue answers
//                429, a client that disconnects is cancelled and freed, a long request times out
//      load N C PID   N streaming requests from C concurrent clients: greedy outputs equal
//                the same requests sent one at a time, and the server's RSS stays flat
// Prints one line per check and exits 1 when any failed.
import { createRequire } from 'node:module';
import fs from 'node:fs';

const require = createRequire(new URL('../node/package.json', import.meta.url));
const OpenAI = require('openai');

const [mode, baseURL, model, ...rest] = process.argv.slice(2);
const apiKey = process.env.SWITCHYARD_API_KEY || 'unused';
const client = new OpenAI({ baseURL: baseURL + '/v1', apiKey, maxRetries: 0, timeout: 120000 });
let failures = 0;
function check(name, cond, detail = '') {
  if (cond) console.log(`ok   [${name}]`);
  else { failures++; console.log(`FAIL [${name}] ${detail}`); }
}
async function expectError(name, promise, Type, status, test = () => true) {
  try {
    await promise;
    check(name, false, 'no error was thrown');
  } catch (e) {
    check(name, e instanceof Type && e.status === status && test(e),
          `${e.constructor.name} ${e.status}: ${e.message}`);
  }
}
const greedy = { temperature: 0, seed: 7 };
const user = (content) => [{ role: 'user', content }];

async function streamText(params) {
  const stream = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
  let text = '', reasoning = '', finish = null, usage = null, chunks = 0;
  const calls = [];
  for await (const chunk of stream) {
    chunks++;
    if (chunk.usage) usage = chunk.usage;
    const c = chunk.choices[0];
    if (!c) continue;
    text += c.delta.content ?? '';
    reasoning += c.delta.reasoning_content ?? '';
    for (const tc of c.delta.tool_calls ?? []) {
      calls[tc.index] ??= { id: '', name: '', arguments: '' };
      if (tc.id) calls[tc.index].id = tc.id;
      if (tc.function?.name) calls[tc.index].name += tc.function.name;
      if (tc.function?.arguments) calls[tc.index].arguments += tc.function.arguments;
    }
    if (c.finish_reason) finish = c.finish_reason;
  }
  return { text, reasoning, finish, usage, chunks, calls };
}

async function api() {
  const models = await client.models.list();
  check('models.list names the model', models.data.some((m) => m.id === model), JSON.stringify(models.data));

  const p = { model, messages: user('Tell me a story about a cat.'), max_tokens: 24, ...greedy };
  const a = await client.chat.completions.create(p);
  const content = a.choices[0].message.content;
  check('plain: an answer', typeof content === 'string' && content.length > 0, JSON.stringify(a));
  check('plain: usage adds up', a.usage.prompt_tokens > 0 && a.usage.completion_tokens > 0 &&
        a.usage.completion_tokens <= 24 && a.usage.total_tokens === a.usage.prompt_tokens + a.usage.completion_tokens,
        JSON.stringify(a.usage));
  check('plain: finish_reason', ['stop', 'length'].includes(a.choices[0].finish_reason), a.choices[0].finish_reason);
  check('plain: object and id', a.object === 'chat.completion' && a.id.startsWith('chatcmpl-'), a.object);
  const again = await client.chat.completions.create(p);
  check('greedy answers repeat', again.choices[0].message.content === content);

  const s = await streamText(p);
  check('streaming: the same text as the whole answer', s.text === content, JSON.stringify([s.text, content]));
  check('streaming: usage in the last chunk', s.usage && s.usage.completion_tokens === a.usage.completion_tokens &&
        s.usage.prompt_tokens === a.usage.prompt_tokens, JSON.stringify(s.usage));
  check('streaming: finish_reason', s.finish === a.choices[0].finish_reason, s.finish);

  // A stop string from the middle of the greedy answer: the answer ends right before it.
  const chars = [...content];
  if (chars.length >= 8) {
    const stop = chars.slice(4, 7).join('');
    const cut = content.slice(0, content.indexOf(stop));
    const st = await client.chat.completions.create({ ...p, stop: [stop] });
    check('stop string: cut before it', st.choices[0].message.content === cut && st.choices[0].finish_reason === 'stop',
          JSON.stringify([stop, st.choices[0].message.content, cut]));
    const ss = await streamText({ ...p, stop: stop });
    check('stop string: streamed too', ss.text === cut && ss.finish === 'stop', JSON.stringify([ss.text, cut]));
  } else {
    check('stop string: the greedy answer is long enough to cut', false, JSON.stringify(content));
  }

  const lp = await client.chat.completions.create({ ...p, logprobs: true, top_logprobs: 3 });
  const items = lp.choices[0].logprobs?.content ?? [];
  check('logprobs: one per token', items.length === lp.usage.completion_tokens, `${items.length} vs ${lp.usage.completion_tokens}`);
  check('logprobs: greedy picks the most likely, alternatives sorted',
        items.length > 0 && items.every((t) => t.top_logprobs.length === 3 && t.logprob <= 0 &&
          Math.abs(t.logprob - t.top_logprobs[0].logprob) < 1e-6 &&
          t.top_logprobs[0].logprob >= t.top_logprobs[1].logprob && t.top_logprobs[1].logprob >= t.top_logprobs[2].logprob &&
          t.top_logprobs.reduce((x, y) => x + Math.exp(y.logprob), 0) <= 1 + 1e-6),
        JSON.stringify(items[0]));
  // A random model may split characters; the server sends such bytes as U+FFFD, so they are
  // left out of the comparison on both sides.
  const spelled = Buffer.concat(items.map((t) => Buffer.from(t.bytes))).toString('utf8').replaceAll('\uFFFD', '');
  check('logprobs: tokens spell the answer', spelled === lp.choices[0].message.content.replaceAll('\uFFFD', ''),
        JSON.stringify([spelled, lp.choices[0].message.content]));

  // response_format json_object: every answer that ends by itself is one JSON object.
  let objects = 0, broken = [];
  for (const extra of [{ temperature: 0 }, { temperature: 1.5, seed: 3 }, { temperature: 1.5, seed: 4 }]) {
    const j = await client.chat.completions.create({ model, messages: user('Reply in JSON.'), max_tokens: 64,
      response_format: { type: 'json_object' }, ...extra });
    if (j.choices[0].finish_reason !== 'stop') continue;
    try {
      const v = JSON.parse(j.choices[0].message.content);
      if (v && typeof v === 'object' && !Array.isArray(v)) objects++;
      else broken.push(j.choices[0].message.content);
    } catch {
      broken.push(j.choices[0].message.content);
    }
  }
  check('json_object: the answers are JSON objects', objects >= 1 && broken.length === 0, JSON.stringify(broken));

  const c = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 10, temperature: 0 });
  check('completions: text and usage', typeof c.choices[0].text === 'string' && c.usage.completion_tokens > 0 &&
        c.object === 'text_completion', JSON.stringify(c));
  const e = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 10, temperature: 0, echo: true });
  check('completions: echo', e.choices[0].text === 'Once upon a time' + c.choices[0].text, JSON.stringify(e.choices[0].text));

  const tk = await (await fetch(baseURL + '/tokenize', { method: 'POST', headers: hdr(), body: JSON.stringify({ content: 'Hello world' }) })).json();
  const dt = await (await fetch(baseURL + '/detokenize', { method: 'POST', headers: hdr(), body: JSON.stringify({ tokens: tk.tokens }) })).json();
  check('tokenize and detokenize round trip', dt.content === 'Hello world' && tk.count === tk.tokens.length, JSON.stringify([tk, dt]));

  // Errors surface as the client's exception types, in OpenAI's shape.
  await expectError('unknown model: NotFoundError', client.chat.completions.create({ ...p, model: 'gpt-5' }),
                    OpenAI.NotFoundError, 404, (x) => x.code === 'model_not_found');
  await expectError('wrong type: BadRequestError naming the field',
                    client.chat.completions.create({ ...p, temperature: 'hot' }), OpenAI.BadRequestError, 400,
                    (x) => x.param === 'temperature');
  await expectError('out of range: BadRequestError', client.chat.completions.create({ ...p, top_p: 3 }),
                    OpenAI.BadRequestError, 400, (x) => x.param === 'top_p');
  await expectError('no messages: BadRequestError', client.chat.completions.create({ model, messages: [] }),
                    OpenAI.BadRequestError, 400, (x) => x.param === 'messages');
  const long = 'story '.repeat(3000);
  await expectError('prompt longer than the context: both numbers',
                    client.chat.completions.create({ model, messages: user(long), max_tokens: 4 }),
                    OpenAI.BadRequestError, 400,
                    (x) => x.code === 'context_length_exceeded' && /maximum context length is \d+ tokens/.test(x.message) &&
                      /resulted in \d+ tokens/.test(x.message));
  const bad = await fetch(baseURL + '/v1/chat/completions', { method: 'POST', headers: hdr(), body: '{"model": ' });
  const badj = await bad.json();
  check('malformed JSON: 400 in OpenAI shape', bad.status === 400 && typeof badj.error?.message === 'string' &&
        'type' in badj.error && 'param' in badj.error && 'code' in badj.error, JSON.stringify(badj));
  if (process.env.SWITCHYARD_API_KEY) {
    const nokey = new OpenAI({ baseURL: baseURL + '/v1', apiKey: 'wrong', maxRetries: 0 });
    await expectError('wrong API key: AuthenticationError', nokey.models.list(), OpenAI.AuthenticationError, 401);
  }
}

function hdr() {
  return { 'Content-Type': 'application/json', Authorization: 'Bearer ' + apiKey };
}

const weather = [{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];

async function tools() {
  const p = { model, messages: user('What is the weather in Paris?'), tools: weather, max_tokens: 64 };
  const a = await client.chat.completions.create(p);
  const m = a.choices[0].message;
  const call = m.tool_calls?.[0];
  check('tool call: parsed into tool_calls', a.choices[0].finish_reason === 'tool_calls' && call?.type === 'function' &&
        call.function.name === 'get_weather' && typeof call.function.arguments === 'string' && call.id,
        JSON.stringify(a.choices[0]));
  let args = null;
  try { args = JSON.parse(call?.function.arguments ?? ''); } catch {}
  check('tool call: arguments are a JSON string', args && args.city === 'Paris', call?.function.arguments);
  check('tool call: no stray content', !m.content, JSON.stringify(m.content));
  const s = await streamText(p);
  check('tool call: streamed as deltas', s.finish === 'tool_calls' && s.calls.length === 1 && s.calls[0].name === 'get_weather' &&
        s.calls[0].arguments === call?.function.arguments, JSON.stringify(s));
  // The round trip: the call and its result go back, and the template renders them.
  const back = await client.chat.completions.create({ ...p, messages: [
    ...p.messages, m, { role: 'tool', tool_call_id: call?.id, content: '{"temperature": 18}' }] });
  check('tool call: the result goes back as a tool message', back.usage.prompt_tokens > a.usage.prompt_tokens,
        JSON.stringify([back.usage, a.usage]));
  const none = await client.chat.completions.create({ ...p, tool_choice: 'none' });
  check("tool_choice 'none': the text stays content", !none.choices[0].message.tool_calls?.length &&
        none.choices[0].message.content.includes('get_weather'), JSON.stringify(none.choices[0].message));
}

async function reasoning() {
  const p = { model, messages: user('Think first.'), max_tokens: 64 };
  const a = await client.chat.completions.create(p);
  const m = a.choices[0].message;
  check('reasoning: split out of <think>', m.reasoning_content?.trim() === 'I should answer.' && m.content.trim() === 'Hello!',
        JSON.stringify(m));
  const s = await streamText(p);
  check('reasoning: streamed as reasoning_content deltas', s.reasoning === m.reasoning_content && s.text === m.content,
        JSON.stringify(s));
}

async function metric(name) {
  const text = await (await fetch(baseURL + '/metrics', { headers: hdr() })).text();
  const m = new RegExp('^' + name.replace(/[{}"]/g, (c) => '\\' + c) + ' ([0-9.e+-]+)$', 'm').exec(text);
  return m ? Number(m[1]) : 0;
}
// Polls until cond() holds (at most 30 s); no timing is measured, only states awaited.
async function until(cond) {
  for (let i = 0; i < 300; i++) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

async function limits() {
  const long = { model, messages: user('Go on.'), max_tokens: 3000, ignore_eos: true, temperature: 0 };
  const ac = new AbortController();
  const a = await client.chat.completions.create({ ...long, stream: true }, { signal: ac.signal });
  const it = a[Symbol.asyncIterator]();
  await it.next();  // the first chunk: A holds the only slot
  const b = client.chat.completions.create({ model, messages: user('Short.'), max_tokens: 4, temperature: 0 });
  check('a second request waits in the queue', await until(async () => (await metric('switchyard_queue_waiting_interactive')) === 1));
  try {
    await client.chat.completions.create({ model, messages: user('Third.'), max_tokens: 4 });
    check('a full queue: RateLimitError', false, 'no error');
  } catch (e) {
    check('a full queue: RateLimitError with Retry-After', e instanceof OpenAI.RateLimitError && e.status === 429 &&
          e.headers?.get?.('retry-after') === '1', `${e.constructor.name} ${e.status} ${e.message}`);
  }
  const cancelled = await metric('switchyard_generations_total{outcome="cancelled"}');
  ac.abort();  // the client goes away mid-answer
  check('a client that disconnects is cancelled', await until(async () =>
    (await metric('switchyard_generations_total{outcome="cancelled"}')) === cancelled + 1));
  const rb = await b;
  check('the waiting request runs once the slot is free', rb.choices[0].message.content.length > 0);
  check('the disconnected sequence\'s blocks are freed (only cached ones stay)', await until(async () =>
    (await metric('switchyard_slots_busy')) === 0 &&
    (await metric('switchyard_kv_blocks_used')) === (await metric('switchyard_prefix_cache_blocks'))));
  try {
    await client.chat.completions.create(long);
    check('a request past server.request_timeout: 408', false, 'no error');
  } catch (e) {
    check('a request past server.request_timeout: 408', e.status === 408 && /time limit/.test(e.message),
          `${e.constructor.name} ${e.status} ${e.message}`);
  }
}

function rssKiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

async function load(total, concurrency, pid) {
  const prompts = Array.from({ length: 40 }, (_, i) => `Request ${i}: tell me about the number ${i * 37 % 101}.`);
  const params = (i) => ({ model, messages: user(prompts[i % prompts.length]), max_tokens: 12 + (i % 5), ...greedy });
  // The reference: each distinct request alone, one at a time.
  const expected = new Map();
  for (let i = 0; i < prompts.length * 5; i++) {
    const key = `${i % prompts.length}/${12 + (i % 5)}`;
    if (expected.has(key)) continue;
    const r = await client.chat.completions.create(params(i));
    expected.set(key, r.choices[0].message.content);
  }
  let next = 0, errors = 0, mismatches = 0, warm = 0;
  const worker = async () => {
    while (next < total) {
      const i = next++;
      try {
        const s = await streamText(params(i));
        if (s.text !== expected.get(`${i % prompts.length}/${12 + (i % 5)}`)) mismatches++;
      } catch (e) {
        errors++;
        if (errors < 5) console.log(`  request ${i}: ${e.message}`);
      }
      if (i === Math.floor(total / 4)) warm = rssKiB(pid);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const end = rssKiB(pid);
  check(`load: ${total} streaming requests from ${concurrency} clients, no error`, errors === 0, `${errors} errors`);
  check('load: greedy outputs equal the one-at-a-time answers', mismatches === 0, `${mismatches} differ`);
  // Flat: at most 5% (and 8 MiB of slack) above the size after the first quarter.
  check('load: RSS flat after warm-up', warm > 0 && end <= warm * 1.05 + 8192, `${warm} KiB -> ${end} KiB`);
}

try {
  if (mode === 'api') await api();
  else if (mode === 'tools') await tools();
  else if (mode === 'reasoning') await reasoning();
  else if (mode === 'limits') await limits();
  else if (mode === 'load') await load(Number(rest[0]), Number(rest[1]), Number(rest[2]));
  else { console.log(`unknown mode ${mode}`); failures++; }
} catch (e) {
  failures++;
  console.log(`FAIL [${mode}] ${e.stack || e}`);
}
process.exit(failures ? 1 : 0);
