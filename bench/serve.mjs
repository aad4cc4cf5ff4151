// Serving benchmark (not a test): concurrent streaming clients against an OpenAI-compatible
// server, measuring time to first token, inter-token latency and aggregate tokens/s, and
// the prefix cache's effect on a repeated long system prompt. bench/serve.sh runs it
// against `switchyard serve` and the peer llama-server side by side.
//   node bench/serve.mjs URL [--clients 1,4,8,16] [--requests 4] [--max-tokens 64] [--json]
//                            [--prefix-tokens 2000] [--chat]
// Text completions by default, --chat for /v1/chat/completions. llama-server ends some
// streams of a random-weight model with an output-parser error chunk after the last token, on
// either endpoint: the tokens it streamed count, and such requests are shown under end_err.
const args = process.argv.slice(2);
const url = args[0];
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const clients = opt('--clients', '1,4,8,16').split(',').map(Number);
const perClient = Number(opt('--requests', '4'));
const maxTokens = Number(opt('--max-tokens', '64'));
const prefixWords = Number(opt('--prefix-tokens', '2000'));
const chat = args.includes('--chat');

// One streamed chat completion: the client-side times of the first token and each later one.
async function one(messages) {
  const t0 = performance.now();
  const input = chat ? { messages } : { prompt: messages.map((m) => m.content).join('\n') };
  const res = await fetch(url + (chat ? '/v1/chat/completions' : '/v1/completions'), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ ...input, max_tokens: maxTokens, temperature: 0, stream: true, ignore_eos: true,
                           stream_options: { include_usage: true } }),
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  const times = [];
  let usage = null, buf = '';
  const dec = new TextDecoder();
  for await (const part of res.body) {
    buf += dec.decode(part, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 2);
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const j = JSON.parse(line.slice(6));
      if (j.error) {
        // llama-server ends some streams with an output-parser error after the last token; the
        // tokens already streamed were served and count, the request is marked as such.
        if (times.length) return { t0, times, tokens: times.length, endError: true };
        throw new Error(`error chunk: ${JSON.stringify(j.error)}`);
      }
      if (j.usage) usage = j.usage;
      const c = j.choices?.[0];
      if (c && (c.text || c.delta?.content || c.delta?.reasoning_content)) times.push(performance.now());
    }
  }
  return { t0, times, tokens: usage?.completion_tokens ?? times.length, endError: false };
}

const pct = (xs, p) => {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

const rows = [];
for (const c of clients) {
  const ttft = [], itl = [];
  let tokens = 0, errors = 0, endErrors = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: c }, async (_, k) => {
    for (let r = 0; r < perClient; r++) {
      const m = [{ role: 'user', content: `Client ${k}, request ${r}: write a long story about a lighthouse keeper.` }];
      let x;
      try {
        x = await one(m);
      } catch (e) {
        errors++;  // counted and shown: a server that drops connections under load says so
        continue;
      }
      tokens += x.tokens;
      if (x.endError) endErrors++;
      if (x.times.length) ttft.push(x.times[0] - x.t0);
      for (let i = 1; i < x.times.length; i++) itl.push(x.times[i] - x.times[i - 1]);
    }
  }));
  const wall = (performance.now() - start) / 1000;
  rows.push({ clients: c, requests: c * perClient, ttft_p50_ms: pct(ttft, 50), ttft_p99_ms: pct(ttft, 99),
              itl_p50_ms: pct(itl, 50), itl_p99_ms: pct(itl, 99), tokens_per_s: tokens / wall, errors,
              end_errors: endErrors });
}

// A long system prompt sent twice: the second answer's first token comes from the prefix cache.
const system = Array.from({ length: prefixWords }, (_, i) => `rule${i % 97}`).join(' ');
const prefix = [];
for (let r = 0; r < 2; r++) {
  const x = await one([{ role: 'system', content: system }, { role: 'user', content: `Question ${r}: why?` }]);
  prefix.push(x.times.length ? x.times[0] - x.t0 : 0);
}
const out = { url, rows, prefix_ttft_ms: prefix, prefix_speedup: prefix[1] > 0 ? prefix[0] / prefix[1] : 0 };
if (args.includes('--json')) console.log(JSON.stringify(out));
else {
  console.log('clients requests  ttft_p50  ttft_p99  itl_p50  itl_p99  tokens/s   errors  end_err');
  for (const r of rows)
    console.log([r.clients, r.requests, r.ttft_p50_ms.toFixed(1), r.ttft_p99_ms.toFixed(1), r.itl_p50_ms.toFixed(1),
                 r.itl_p99_ms.toFixed(1), r.tokens_per_s.toFixed(1), r.errors, r.end_errors].map(String).map((s) => s.padStart(8)).join(' '));
  console.log(`repeated ${prefixWords}-word system prompt: TTFT ${prefix[0].toFixed(1)} ms, then ${prefix[1].toFixed(1)} ms ` +
              `(${out.prefix_speedup.toFixed(1)}x)`);
}
