import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const DRIVER = fileURLToPath(new URL('../driver.mjs', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./fixtures/memory.mjs', import.meta.url));

// The driver on one export of a fixture: its greeting, then one answer per request, and its stderr.
function start(exportName, fixture = FIXTURE) {
  const child = spawn(process.execPath, [DRIVER, fixture, exportName], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  let stderr = '';
  child.stderr.on('data', chunk => { stderr += chunk; });
  let id = 0;
  return {
    async next() { return JSON.parse((await lines.next()).value); },
    send(message) { child.stdin.write(`${JSON.stringify(message)}\n`); },
    async ask(op, fields) {
      child.stdin.write(`${JSON.stringify({ id: ++id, op, ...fields })}\n`);
      const answer = await this.next();
      assert.equal(answer.id, id);
      return answer;
    },
    stderr: () => stderr,
    async end() {
      const exited = child.exitCode !== null ? Promise.resolve(child.exitCode)
        : new Promise(resolve => child.on('exit', code => resolve(code)));
      child.stdin.end();
      return exited;
    },
  };
}

test('greets with the store, builds, calls and closes; the store\'s output stays off the protocol', async () => {
  const driver = start('MemoryStore');
  const hello = await driver.next();
  assert.equal(hello.protocol, 'memory-regression-store/1');
  assert.deepEqual(hello.factory, { kind: 'class', style: 'options', parameters: [
    { name: 'maxMessages', optional: true }, { name: 'namespace', optional: true }] });
  assert.equal(hello.line, 2);
  const built = await driver.ask('build', { args: { maxMessages: 2 } });
  assert.deepEqual(built.result.methods.map(m => m.name).sort(), ['addMessage', 'fail', 'failInTransaction', 'getMessages']);
  assert.deepEqual(built.result.methods.find(m => m.name === 'addMessage').parameters, ['sessionId', 'role', 'content']);
  const instance = built.result.instance;
  for (const content of ['a', 'b', 'c']) {
    assert.equal((await driver.ask('call', { instance, method: 'addMessage', args: ['s', 'user', content] })).result, null);
  }
  assert.deepEqual((await driver.ask('call', { instance, method: 'getMessages', args: ['s'] })).result,
                   [{ role: 'user', content: 'b' }, { role: 'user', content: 'c' }]);
  assert.match(driver.stderr(), /adding to s/);
  assert.equal((await driver.ask('close', { instance })).result, null);
  assert.match((await driver.ask('call', { instance, method: 'getMessages', args: ['s'] })).error.message, /no instance/);
  assert.equal(await driver.end(), 0);
});

test('what the store throws comes back with its name and stack, cut where the driver\'s frames begin', async () => {
  const driver = start('MemoryStore');
  await driver.next();
  const { result: { instance } } = await driver.ask('build', { args: {} });
  const { error } = await driver.ask('call', { instance, method: 'fail', args: [] });
  assert.equal(error.name, 'RangeError');
  assert.equal(error.message, 'as asked');
  assert.match(error.stack, /fixtures\/memory\.mjs/);
  assert.doesNotMatch(error.stack, /driver\.mjs/);
  assert.match((await driver.ask('teleport', {})).error.message, /unknown op "teleport"/);
  await driver.end();
});

test('the errors that caused what the store throws come with it: the first three, and how many there were', async () => {
  const driver = start('MemoryStore');
  await driver.next();
  const { result: { instance } } = await driver.ask('build', { args: {} });
  const { error } = await driver.ask('call', { instance, method: 'failInTransaction', args: [] });
  assert.match(error.message, /^EXECABORT/);
  assert.deepEqual(error.causes.map(cause => cause.message), [1, 2, 3].map(n => `MOVED ${n} 127.0.0.1:7001`));
  assert.equal(error.causes_total, 4);
  assert.ok(error.causes.every(cause => !('causes' in cause)));
  await driver.end();
});

test('a factory function is called with its positional parameters, in order', async () => {
  const driver = start('makeStore');
  const hello = await driver.next();
  assert.deepEqual(hello.factory, { kind: 'function', style: 'positional', parameters: [
    { name: 'redisUrl', optional: false }, { name: 'ttl', optional: true }] });
  const built = await driver.ask('build', { args: { redisUrl: 'redis://x' } });
  assert.deepEqual(built.result.methods, [{ name: 'load', parameters: ['sessionId'] }]);
  await driver.end();
});

test('an export the module lacks is said in the greeting, with what it exports', async () => {
  const driver = start('Nothing');
  const hello = await driver.next();
  assert.match(hello.error.message, /exports no class or function "Nothing" \(it exports: CountingStore, MemoryStore, doubleLength, makeStore\)/);
  assert.equal(await driver.end(), 0);
});

test('a CommonJS module\'s export is served as an ES module\'s is', async () => {
  const driver = start('CommonStore', fileURLToPath(new URL('./fixtures/common.cjs', import.meta.url)));
  const hello = await driver.next();
  assert.deepEqual(hello.factory.parameters, [{ name: 'sessionId', optional: false }, { name: 'maxMessages', optional: true }]);
  assert.equal(hello.line, 2);
  const built = await driver.ask('build', { args: { sessionId: 's' } });
  assert.deepEqual((await driver.ask('call', { instance: built.result.instance, method: 'load', args: [] })).result, []);
  await driver.end();
});

test('the suite\'s functions reach the store as async functions whose answers, and errors, come back over the protocol', async () => {
  const driver = start('CountingStore');
  await driver.next();
  const built = await driver.ask('build', { args: { countTokens: { $function: 4 }, summarize: { $function: 5 } } });
  assert.equal(built.result.summary_in_window, false);
  const { instance } = built.result;
  driver.send({ id: 10, op: 'call', instance, method: 'cost', args: ['hello'] });
  const asked = await driver.next();
  assert.deepEqual([asked.function, asked.args], [4, ['hello']]);
  driver.send({ callback: asked.callback, result: 7 });
  assert.deepEqual(await driver.next(), { id: 10, result: 7 });
  driver.send({ id: 11, op: 'call', instance, method: 'digest', args: [[{ role: 'user', content: 'hi' }]] });
  const summarising = await driver.next();
  assert.deepEqual([summarising.function, summarising.args], [5, [[{ role: 'user', content: 'hi' }]]]);
  driver.send({ callback: summarising.callback, error: { name: 'SummarizerFailed', message: 'injected' } });
  assert.deepEqual(await driver.next(), { id: 11, result: 'caught SummarizerFailed: injected' });
  await driver.end();
});

test('an export that is a plain function is invoked itself: a token counter of the store\'s own', async () => {
  const driver = start('doubleLength');
  assert.equal((await driver.next()).factory.kind, 'function');
  assert.equal((await driver.ask('invoke', { args: ['abc'] })).result, 6);
  await driver.end();
});
