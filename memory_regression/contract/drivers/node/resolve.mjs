// Finding what an ESM import of a package loads, from a given place: require's lookup finds the
// package, and its export map is read for the import condition (require's own condition would give
// its CommonJS entry: a second copy of the package, whose classes are not the ES module's).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

// The file URL an `import` of `pkg` + `subpath` ('.', './messages') from the file `from` loads.
export function esmEntry(from, pkg, subpath) {
  let dir = dirname(createRequire(from).resolve(pkg));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === pkg) break;
    if (dirname(dir) === dir) throw new Error(`no package.json of ${pkg} above ${from}`);
    dir = dirname(dir);
  }
  const { exports, main } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const exported = typeof exports === 'string' && subpath === '.' ? exports : exports?.[subpath];
  const target = exported?.import?.default ?? exported?.import ?? exported?.default ?? exported
    ?? (subpath === '.' ? main ?? 'index.js' : subpath);
  if (typeof target !== 'string') throw new Error(`${pkg} exports no ${subpath} for import`);
  return pathToFileURL(join(dir, target));
}

// A package specifier ('@scope/name/sub') as its package name and export subpath.
export function splitSpecifier(specifier) {
  const parts = specifier.split('/');
  const length = specifier.startsWith('@') ? 2 : 1;
  const rest = parts.slice(length).join('/');
  return [parts.slice(0, length).join('/'), rest ? `./${rest}` : '.'];
}
