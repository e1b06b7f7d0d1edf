// `gguflow serve` driven by the official openai npm client (tests/server/package.json), run by
// ctest: streaming and non-streaming chat and completions, embeddings (the client asks for base64
// by default; floats too), errors as the client's exception types, then a bounded load test:
// 64 requests over 8 concurrent connections, every one answered once, every temperature-0 (and
// seeded) response identical to the same request run alone; a client process killed mid-stream
// frees its slot; SIGTERM exits 0.
//
//   node tests/server/openai_client_test.mjs --gguflow build/bin/gguflow --data ../shared/data
// ($GGUFLOW_TEST_DATA overrides --data; the model is models/synth-qwen2-tiny-Q8_0.gguf there: a
// chat template, an embedding graph, random weights.)
// Exit 0: passed; 1: failed; 77: skipped (no openai package: run tools/install-deps.sh).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) => (a.startsWith('--') ? [...pairs, [a.slice(2), all[i + 1]]] : pairs), []));
const SKIP = 77;
args.model = join(process.env.GGUFLOW_TEST_DATA || args.data, 'models', 'synth-qwen2-tiny-Q8_0.gguf');

if (!existsSync(join(here, 'node_modules', 'openai'))) {
  console.log(`SKIPPED: the openai npm package is not installed in ${here}/node_modules (tools/install-deps.sh installs it: npm ci --prefix tests/server)`);
  process.exit(SKIP);
}
if (!existsSync(args.model)) {
  console.log(`SKIPPED: test model not found: ${args.model} (set GGUFLOW_TEST_DATA to the shared/data folder)`);
  process.exit(SKIP);
}
const { default: OpenAI } = await import('openai');

// Starts the server on a free port; resolves with {proc, port, log()}.
function startServer(extra) {
  return new Promise((resolve, reject) => {
    const proc = spawn(args.gguflow, ['serve', '-m', args.model, '--port', '0', '--quiet', ...extra]);
    let log = '';
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${log}`)), 60000);
    proc.stderr.on('data', (d) => {
      log += d;
      const m = log.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, port: Number(m[1]), log: () => log });
      }
    });
    proc.on('exit', (code) => reject(new Error(`server exited (${code}):\n${log}`)));
  });
}

async function metric(port, name) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const m = text.match(new RegExp(`(^|\\n)${name} ([0-9.e+-]+)\\n`));
  return m ? Number(m[2]) : undefined;
}

async function eventually(condition, timeoutMs = 10000) {
  const start = Date.now();
  while (Date.now() - start < timeoutMs) {
    if (await condition()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return condition();
}

let failures = 0;
async function check(name, body) {
  try {
    await body();
    console.log(`ok   ${name}`);
  } catch (e) {
    failures += 1;
    console.log(`FAIL ${name}\n${e.stack}`);
  }
}

const server = await startServer(['--parallel', '8', '-c', '2048', '-t', '2']);
const client = new OpenAI({ baseURL: `http://127.0.0.1:${server.port}/v1`, apiKey: 'none', maxRetries: 0 });
const model = (await client.models.list()).data[0].id;

await check('models.list names the served model', async () => {
  assert.equal(model, args.model.split('/').pop().replace(/\.gguf$/, ''));
});

const chatRequest = { model, messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Say hello' }], temperature: 0, max_tokens: 10 };

await check('chat: non-streamed and streamed give the same reply', async () => {
  const whole = await client.chat.completions.create(chatRequest);
  assert.equal(whole.object, 'chat.completion');
  assert.equal(whole.choices[0].message.role, 'assistant');
  assert.equal(typeof whole.choices[0].message.content, 'string');
  assert.equal(whole.choices[0].finish_reason, 'length');
  assert.equal(whole.usage.completion_tokens, 10);
  assert.ok(whole.usage.prompt_tokens > 5);

  const stream = await client.chat.completions.create({ ...chatRequest, stream: true, stream_options: { include_usage: true } });
  let text = '';
  let finish = null;
  let usage = null;
  let chunks = 0;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    chunks += 1;
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      text += choice.delta.content ?? '';
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  assert.ok(chunks >= 3, `expected several chunks, got ${chunks}`);
  assert.equal(text, whole.choices[0].message.content);
  assert.equal(finish, 'length');
  assert.deepEqual(usage, whole.usage);
});

await check('completions: non-streamed and streamed give the same text', async () => {
  const request = { model, prompt: 'Once upon a time', temperature: 0, max_tokens: 12 };
  const whole = await client.completions.create(request);
  assert.equal(whole.object, 'text_completion');
  assert.equal(whole.usage.completion_tokens, 12);
  let text = '';
  let finish = null;
  for await (const chunk of await client.completions.create({ ...request, stream: true })) {
    text += chunk.choices[0].text;
    finish = chunk.choices[0].finish_reason ?? finish;
  }
  assert.equal(text, whole.choices[0].text);
  assert.equal(finish, 'length');
});

await check('embeddings: base64 (the client default) and float agree', async () => {
  const input = ['The cat sat on the mat.', 'A completely different sentence about ships.'];
  const packed = await client.embeddings.create({ model, input });
  assert.equal(packed.data.length, 2);
  const floats = await client.embeddings.create({ model, input, encoding_format: 'float' });
  for (let i = 0; i < 2; ++i) {
    assert.equal(packed.data[i].index, i);
    assert.ok(packed.data[i].embedding.length > 8);
    assert.deepEqual(Array.from(packed.data[i].embedding, Math.fround), floats.data[i].embedding.map(Math.fround));
  }
  const norm = Math.hypot(...floats.data[0].embedding);
  assert.ok(Math.abs(norm - 1) < 1e-4, `expected unit vectors, norm ${norm}`);
  assert.notDeepEqual(floats.data[0].embedding, floats.data[1].embedding);
  assert.ok(packed.usage.prompt_tokens > 0);
});

await check('errors arrive as the client library\'s exception types', async () => {
  await assert.rejects(client.chat.completions.create({ ...chatRequest, model: 'no-such-model' }),
    (e) => e.status === 404 && e instanceof OpenAI.NotFoundError && /does not exist/.test(e.message));
  await assert.rejects(client.chat.completions.create({ ...chatRequest, temperature: 5 }),
    (e) => e.status === 400 && e instanceof OpenAI.BadRequestError && /temperature/.test(e.message));
  await assert.rejects(client.completions.create({ model, prompt: 'one more word '.repeat(1000), max_tokens: 2 }),
    (e) => e.status === 400 && /longer than the context of 2048 tokens/.test(e.message));
});

// The load test: 64 requests, 8 at a time; then each alone. Greedy ones and seeded samplers.
function loadRequest(i) {
  const sampling = i % 4 === 3 ? { temperature: 0.7, seed: 1000 + i } : { temperature: 0 };
  const prompt = `Request ${i}: the ${['red', 'small', 'old', 'quick'][i % 4]} fox number ${i * 7} went`;
  return i % 2 === 0
    ? { kind: 'chat', body: { model, messages: [{ role: 'user', content: prompt }], max_tokens: 8 + (i % 9), ...sampling } }
    : { kind: 'completion', body: { model, prompt, max_tokens: 8 + (i % 9), stream: i % 3 === 0, ...sampling } };
}

async function runOne(request) {
  if (request.kind === 'chat') {
    const r = await client.chat.completions.create(request.body);
    return { id: r.id, text: r.choices[0].message.content, tokens: r.usage.completion_tokens };
  }
  if (request.body.stream) {
    let text = '';
    let id = null;
    for await (const chunk of await client.completions.create(request.body)) {
      id = chunk.id;
      text += chunk.choices[0]?.text ?? '';
    }
    return { id, text, tokens: null };
  }
  const r = await client.completions.create(request.body);
  return { id: r.id, text: r.choices[0].text, tokens: r.usage.completion_tokens };
}

async function runAll(requests, concurrency) {
  const results = new Array(requests.length);
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < requests.length) {
      const i = next++;
      results[i] = await runOne(requests[i]);
    }
  }));
  return results;
}

await check('load: 64 requests over 8 connections, each identical to the same request alone', async () => {
  const requests = Array.from({ length: 64 }, (_, i) => loadRequest(i));
  const together = await runAll(requests, 8);
  assert.equal(together.filter(Boolean).length, 64);
  assert.equal(new Set(together.map((r) => r.id)).size, 64, 'every response has its own id');
  const alone = await runAll(requests, 1);
  for (let i = 0; i < 64; ++i) {
    assert.equal(together[i].text, alone[i].text, `request ${i}: batched and alone differ`);
    if (together[i].tokens !== null) assert.equal(together[i].tokens, requests[i].body.max_tokens);
  }
  assert.equal(new Set(alone.map((r) => r.text)).size > 32, true, 'the replies differ between requests');
});

await check('a client killed mid-stream frees its slot', async () => {
  const cancelledBefore = (await metric(server.port, 'gguflow_requests_cancelled_total')) ?? 0;
  const child = spawn(process.execPath, ['--input-type=module', '-e', `
    const res = await fetch('http://127.0.0.1:${server.port}/v1/completions', {method: 'POST',
      headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({model: '${model}', prompt: 'Once', max_tokens: 100000, ignore_eos: true, stream: true})});
    for await (const part of res.body) { process.stdout.write('streaming\\n'); }`]);
  await new Promise((resolve) => child.stdout.once('data', resolve));
  assert.equal(await metric(server.port, 'gguflow_kv_slots_in_use'), 1);
  child.kill('SIGKILL');
  assert.ok(await eventually(async () => (await metric(server.port, 'gguflow_kv_slots_in_use')) === 0),
    'the slot was not freed');
  assert.equal(await metric(server.port, 'gguflow_requests_cancelled_total'), cancelledBefore + 1);
});

await check('SIGTERM exits 0', async () => {
  const code = await new Promise((resolve) => {
    server.proc.removeAllListeners('exit');
    server.proc.on('exit', (c) => resolve(c));
    server.proc.kill('SIGTERM');
  });
  assert.equal(code, 0, server.log());
});

if (failures) {
  console.log(`${failures} check(s) failed; server log:\n${server.log().slice(-3000)}`);
  process.exit(1);
}
console.log('all checks passed');
