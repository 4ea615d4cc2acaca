import assert from 'node:assert/strict';
import { test } from 'node:test';

import { describeParameters } from '../parameters.mjs';

const names = fn => describeParameters(fn).parameters.map(p => `${p.name}${p.optional ? '?' : ''}`);

test('positional parameters, defaults optional, rest and comments left out', () => {
  function f(redisUrl, /* skipped, */ maxMessages = 20, ttl = (a, b) => a + b, ...rest) {}
  assert.deepEqual(names(f), ['redisUrl', 'maxMessages?', 'ttl?']);
  assert.equal(describeParameters(f).style, 'positional');
});

test('a class reads its constructor, or the one it inherits', () => {
  class Base { constructor(url, { deep } = {}, namespace = 'chat:') {} }
  class Derived extends Base {}
  class Bare {}
  assert.deepEqual(names(Derived), ['url', 'message?', 'namespace?']);
  assert.deepEqual(names(Bare), []);
});

test('one destructured object is read as its options', () => {
  class Store { constructor({ redisUrl, maxMessages = 20, window: size = 5, 'quoted': q } = {}) {} }
  const described = describeParameters(Store);
  assert.equal(described.style, 'options');
  assert.deepEqual(names(Store), ['redisUrl?', 'maxMessages?', 'window?', "'quoted'?"]);
});

test('arrow functions, with and without parentheses', () => {
  assert.deepEqual(names(sessionId => sessionId), ['sessionId']);
  assert.deepEqual(names(async (sessionId, message = {}) => message), ['sessionId', 'message?']);
});
