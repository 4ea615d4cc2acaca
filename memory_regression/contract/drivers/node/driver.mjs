#!/usr/bin/env node
// Serves one export of a Node.js module, a chat-memory store, to the memory regression suite over its
// store protocol (docs/protocol.md): newline-delimited JSON, requests on stdin, answers on stdout.
//
//   node driver.mjs path/to/memory.mjs ChatMemory
//
// The store's own output (console.log included) goes to stderr: stdout carries the protocol only.
// A TypeScript module (.ts, .mts, .cts) is loaded through tsx, from the store's project or this
// package's own dependencies.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { FRAMEWORKS } from './frameworks.mjs';
import { describeParameters } from './parameters.mjs';
import { esmEntry, splitSpecifier } from './resolve.mjs';

export const PROTOCOL = 'memory-regression-store/1';
const FUNCTION = '$function';
const CLOSERS = ['close', 'quit', 'disconnect'];
const OWN_FILES = ['driver.mjs', 'frameworks.mjs'].map(name => new URL(name, import.meta.url).href);

const protocolOut = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, encoding, callback) => process.stderr.write(chunk, encoding, callback);
const send = message => protocolOut(`${JSON.stringify(message)}\n`);

// Where an error keeps the errors that caused it: the standard cause, ioredis' previousErrors (the
// queued commands a MULTI's EXECABORT discarded: a MOVED on a cluster), an AggregateError's errors,
// node-redis' replies (a MultiErrorReply's); the first CAUSES_KEPT of them are sent, with their count.
const CAUSE_KEYS = ['cause', 'previousErrors', 'errors', 'replies'];
const CAUSES_KEPT = 3;

// What the store raised, its stack cut where the driver's own frames begin (this one's, a framework's),
// and what caused it (the causes' own causes are not sent).
function errorOf(error, withCauses = true) {
  if (!(error instanceof Error)) return { name: 'Error', message: `a non-Error was thrown: ${String(error)}`, stack: '' };
  const lines = String(error.stack ?? '').split('\n');
  const ours = lines.findIndex(line => OWN_FILES.some(file => line.includes(file)));
  const sent = { name: error.name, message: error.message, stack: (ours < 0 ? lines : lines.slice(0, ours)).join('\n') };
  const causes = withCauses ? CAUSE_KEYS.flatMap(key => error[key] ?? []).filter(each => each instanceof Error) : [];
  if (causes.length) Object.assign(sent, { causes: causes.slice(0, CAUSES_KEPT).map(each => errorOf(each, false)),
                                           causes_total: causes.length });
  return sent;
}

async function registerTypeScript(modulePath) {
  for (const from of [modulePath, fileURLToPath(import.meta.url)]) {
    let entry;
    try {
      entry = esmEntry(from, 'tsx', './esm/api');
    } catch {
      continue;   // not installed there: the next place
    }
    (await import(entry.href)).register();
    return;
  }
  throw new Error(`${modulePath} is TypeScript, which needs tsx: npm install --save-dev tsx in the store's project`);
}

// The module's file URL: a path, or a package specifier ('@langchain/redis') resolved from the working directory.
function moduleURL(module) {
  if (existsSync(module)) return pathToFileURL(resolve(module));
  return esmEntry(join(process.cwd(), 'package.json'), ...splitSpecifier(module));
}

// The module's export, and the module's file.
async function load(module, exportName) {
  if (/\.(ts|mts|cts)$/.test(module)) await registerTypeScript(module);
  const url = moduleURL(module);
  const modulePath = fileURLToPath(url);
  const module_ = await import(url.href);
  const target = module_[exportName] ?? module_.default?.[exportName];
  if (typeof target !== 'function') {
    const names = [...new Set([...Object.keys(module_), ...Object.keys(module_.default ?? {})])].filter(n => n !== 'default');
    throw new Error(`${modulePath} exports no class or function ${JSON.stringify(exportName)} (it exports: ${names.join(', ') || 'nothing'})`);
  }
  return [target, modulePath];
}

const isClass = fn => /^class\b/.test(Function.prototype.toString.call(fn));

// The line of the module where `name` is defined (for the reports' annotations), or null.
function definitionLine(modulePath, name) {
  const lines = readFileSync(modulePath, 'utf8').split('\n');
  const defined = new RegExp(`^\\s*(export\\s+)?(default\\s+)?(abstract\\s+)?(async\\s+)?(class|function\\*?)\\s+${name}\\b`
                             + `|^\\s*(export\\s+)?(const|let|var)\\s+${name}\\s*=`);
  const at = lines.findIndex(line => defined.test(line));
  return at < 0 ? null : at + 1;
}

// The instance's methods, own and inherited, each with its parameters' names.
function methodsOf(instance) {
  const names = new Set(Object.keys(instance).filter(name => typeof instance[name] === 'function'));
  for (let proto = Object.getPrototypeOf(instance); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name !== 'constructor' && typeof Object.getOwnPropertyDescriptor(proto, name).value === 'function') names.add(name);
    }
  }
  return [...names].filter(name => !name.startsWith('_') && !name.startsWith('#')).map(name => ({
    name, parameters: describeParameters(instance[name]).parameters.map(p => p.name) }));
}

// The suite's functions (a token counter, a summariser) as async functions of this program: a call
// sends { callback, function, args } and resolves with the suite's answer, or rejects with its error.
const callbacks = new Map();
let nextCallback = 1;

function suiteFunction(number) {
  return (...args) => new Promise((resolve, reject) => {
    const callback = nextCallback++;
    callbacks.set(callback, { resolve, reject });
    send({ callback, function: number, args });
  });
}

function answered({ callback, result, error }) {
  const waiting = callbacks.get(callback);
  if (!waiting) return;
  callbacks.delete(callback);
  if (!error) return waiting.resolve(result);
  const thrown = new Error(error.message);
  thrown.name = error.name;
  waiting.reject(thrown);
}

// The build's arguments, a function of the suite's ({ "$function": N }) made callable.
const withFunctions = args => Object.fromEntries(Object.entries(args).map(([name, value]) =>
  [name, value && typeof value === 'object' && FUNCTION in value ? suiteFunction(value[FUNCTION]) : value]));

// How the instance's compaction summary counts toward its window: its summaryInWindow, else undefined.
function summaryInWindow(instance) {
  const said = [instance.summaryInWindow, instance.summary_in_window, instance.constructor?.summaryInWindow,
                instance.constructor?.summary_in_window].find(value => typeof value === 'boolean');
  return said === undefined ? {} : { summary_in_window: said };
}

async function serve(module, exportName) {
  let factory, modulePath, described, framework;
  try {
    [factory, modulePath] = await load(module, exportName);
    framework = FRAMEWORKS.find(known => known.recognises(factory));
    described = framework ? { kind: 'framework', framework: framework.name, style: 'options',
                              parameters: framework.parameters }
      : { kind: isClass(factory) ? 'class' : 'function', ...describeParameters(factory) };
  } catch (error) {
    send({ protocol: PROTOCOL, error: errorOf(error) });
    return;
  }
  send({ protocol: PROTOCOL, store: exportName, source: modulePath, line: definitionLine(modulePath, exportName),
         language: `javascript (Node.js ${process.version})`, factory: described });
  const instances = new Map();
  let next = 1;
  const ops = {
    async build({ args: sent = {} }) {
      const args = withFunctions(sent);
      const given = described.style === 'options' ? [args] : described.parameters.map(p => args[p.name]);
      while (described.style !== 'options' && given.length && given.at(-1) === undefined) given.pop();
      const instance = framework ? await framework.build(factory, args, modulePath)
        : described.kind === 'class' ? new factory(...given) : await factory(...given);
      const id = next++;
      instances.set(id, instance);
      return { instance: id, methods: methodsOf(instance), ...summaryInWindow(instance) };
    },
    async invoke({ args = [] }) {   // the export itself, a plain function: a token counter
      return (await factory(...args)) ?? null;
    },
    async call({ instance, method, args = [] }) {
      const store = instances.get(instance);
      if (!store) throw new Error(`no instance ${instance}`);
      if (typeof store[method] !== 'function') throw new Error(`the store has no method ${method}`);
      return (await store[method](...args)) ?? null;
    },
    async close({ instance }) {
      const store = instances.get(instance);
      instances.delete(instance);
      const closer = CLOSERS.find(name => typeof store?.[name] === 'function');
      if (closer) await store[closer]();
      return null;
    },
  };
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', async line => {
    let request;
    try {
      request = JSON.parse(line);
    } catch {
      process.stderr.write(`memory-regression driver: not a request: ${line.slice(0, 200)}\n`);
      return;
    }
    if ('callback' in request) return answered(request);
    const op = ops[request.op];
    try {
      if (!op) throw new Error(`unknown op ${JSON.stringify(request.op)}`);
      send({ id: request.id, result: await op(request) });
    } catch (error) {
      send({ id: request.id, error: errorOf(error) });
    }
  });
  lines.on('close', () => process.exit(0));
}

const [module, exportName] = process.argv.slice(2);
if (!module || !exportName) {
  process.stderr.write('usage: node driver.mjs path/to/store-module|package EXPORT\n');
  process.exit(2);
}
await serve(module, exportName);
