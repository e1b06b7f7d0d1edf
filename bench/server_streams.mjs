// `gguflow serve` under 1, 2, 4 and 8 concurrent streams: aggregate decode tokens/s, time to
// first token and per-token latency percentiles, as medians over rounds with their spread, and
// the ratio of each stream count's aggregate to one stream's, measured in the same invocation
// (rounds alternate the stream counts, so machine noise falls on all of them).
//
//   node bench/server_streams.mjs --gguflow build/bin/gguflow --model M.gguf \
//        [--threads 2] [--streams 1,2,4,8] [--rounds 5] [--tokens 128] [--prompt-tokens 8]
//
// Each request is a streamed /v1/completions with ignore_eos, so every stream generates exactly
// --tokens tokens (counted from the usage chunk). Two aggregates: `wall` = all tokens generated
// / the round's wall time (prompts included), and `decode` = the sum over streams of each
// stream's decode rate, (tokens - 1) / (last text event - first): what the streams get while they
// decode together (the "aggregate decode tokens/s"). Time to first token: request sent
// to first text event. Per-token latency of a stream: its mean decode interval (an event may
// carry several tokens when the client reads late).
// Node.js 18+ only (fetch); no packages.
import { spawn } from 'node:child_process';

const argv = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const gguflow = opt('gguflow', 'build/bin/gguflow');
const model = opt('model');
if (!model) {
  console.error('usage: node bench/server_streams.mjs --gguflow BIN --model M.gguf [--threads 2] [--streams 1,2,4,8] [--rounds 5] [--tokens 64]');
  process.exit(2);
}
const threads = opt('threads', '2');
const streamCounts = opt('streams', '1,2,4,8').split(',').map(Number);
const rounds = Number(opt('rounds', '5'));
const tokens = Number(opt('tokens', '128'));
const promptTokens = Number(opt('prompt-tokens', '8'));
const maxStreams = Math.max(...streamCounts);

const server = await new Promise((resolve, reject) => {
  const proc = spawn(gguflow, ['serve', '-m', model, '--port', '0', '--quiet', '-t', threads,
    '--parallel', String(maxStreams), '-c', String(promptTokens * 4 + tokens + 64)]);
  let log = '';
  proc.stderr.on('data', (d) => {
    log += d;
    const m = log.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
    if (m) resolve({ proc, port: Number(m[1]), log: () => log });
  });
  proc.on('exit', (code) => reject(new Error(`server exited (${code}):\n${log}`)));
});
process.on('exit', () => server.proc.kill('SIGKILL'));
const url = `http://127.0.0.1:${server.port}/v1/completions`;

// One streamed request; returns {start, times[]} (ms, one per token event).
async function stream(i) {
  // A prompt of about promptTokens words, different per request (no shared prefix).
  const words = Array.from({ length: promptTokens }, (_, k) => `w${(i * 31 + k * 7) % 97}`).join(' ');
  const start = performance.now();
  const res = await fetch(url, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ prompt: words, max_tokens: tokens, ignore_eos: true, temperature: 0,
      stream: true, stream_options: { include_usage: true } }),
  });
  const times = [];
  let generated = 0;
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const part of res.body) {
    buffer += decoder.decode(part, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (!event.startsWith('data: {')) continue;
      const data = JSON.parse(event.slice(6));
      if (data.usage) generated = data.usage.completion_tokens;
      if (data.choices?.[0]?.text) times.push(performance.now());
    }
  }
  return { start, times, generated };
}

async function round(n, offset) {
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: n }, (_, i) => stream(offset + i)));
  const wall = (performance.now() - t0) / 1000;
  const generated = results.reduce((sum, r) => sum + r.generated, 0);
  // Only meaningful while events arrive one per token; merged events (a tiny model outruns the
  // client) leave no timing for the tokens inside them: NaN, printed as n/a.
  const decodeRate = (r) => r.times.length < 0.8 * r.generated ? NaN
    : (r.generated - 1) / ((r.times.at(-1) - r.times[0]) / 1000);
  return {
    aggregate: generated / wall,
    decode: results.reduce((sum, r) => sum + decodeRate(r), 0),
    ttft: results.map((r) => r.times[0] - r.start),
    perToken: results.map((r) => (r.times.at(-1) - r.times[0]) / Math.max(1, r.generated - 1)),
  };
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * (s.length - 1) + 0.5))];
};
const median = (xs) => quantile(xs, 0.5);

await round(1, 10000);  // warm-up: packs the weights, touches the caches
const by = Object.fromEntries(streamCounts.map((n) => [n, { aggregate: [], decode: [], ttft: [], perToken: [] }]));
for (let r = 0; r < rounds; ++r) {
  for (const n of streamCounts) {
    const x = await round(n, r * 100 + n);
    by[n].aggregate.push(x.aggregate);
    by[n].decode.push(x.decode);
    by[n].ttft.push(...x.ttft);
    by[n].perToken.push(...x.perToken);
  }
}

const base = median(by[streamCounts[0]].decode);
const baseWall = median(by[streamCounts[0]].aggregate);
console.log(`model ${model}; threads ${threads}; ${tokens} tokens per stream after a ~${promptTokens}-word prompt; ${rounds} rounds`);
console.log('| streams | decode tok/s median | min | max | × 1 stream | wall tok/s median | × 1 stream | TTFT p50 ms | TTFT p90 ms | per-token p50 ms | p90 ms | p99 ms |');
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const n of streamCounts) {
  const b = by[n];
  const f = (x) => (Number.isNaN(x) ? 'n/a' : x.toFixed(1));
  console.log(`| ${n} | ${f(median(b.decode))} | ${f(Math.min(...b.decode))} | ${f(Math.max(...b.decode))} | ` +
    `${(median(b.decode) / base).toFixed(2)} | ${f(median(b.aggregate))} | ${(median(b.aggregate) / baseWall).toFixed(2)} | ` +
    `${f(quantile(b.ttft, 0.5))} | ${f(quantile(b.ttft, 0.9))} | ` +
    `${f(quantile(b.perToken, 0.5))} | ${f(quantile(b.perToken, 0.9))} | ${f(quantile(b.perToken, 0.99))} |`);
}
server.proc.kill('SIGTERM');
