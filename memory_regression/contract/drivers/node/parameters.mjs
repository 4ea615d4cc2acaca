// What a JavaScript function takes, read from its source text: JavaScript keeps no parameter names
// anywhere else. Each parameter is { name, optional }; one destructured object parameter
// (`constructor({ redisUrl, maxMessages = 20 })`) is read as the options it names, style "options".

// The positions of `mark` outside brackets, strings and template literals in `text`.
function atTopLevel(text, mark) {
  const found = [];
  let depth = 0, quote = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'" || c === '`') quote = c;
    else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth--;
    else if (c === mark && depth === 0) found.push(i);
  }
  return found;
}

// Splits `text` at its top-level commas.
function topLevel(text) {
  const parts = [];
  let start = 0;
  for (const at of [...atTopLevel(text, ','), text.length]) {
    parts.push(text.slice(start, at).trim());
    start = at + 1;
  }
  return parts.filter(p => p.length > 0);
}

// The text between the parenthesis at `open` and the one that closes it.
function enclosed(text, open) {
  let depth = 0, quote = null;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'" || c === '`') quote = c;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return text.slice(open + 1, i);
  }
  return '';
}

function stripComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');
}

// One parameter's text as { name, optional } (optional: it has a default), or null for a rest parameter.
function parameter(text) {
  if (text.startsWith('...')) return null;
  const equals = atTopLevel(text, '=').filter(at => text[at + 1] !== '>');
  return equals.length ? { name: text.slice(0, equals[0]).trim(), optional: true } : { name: text, optional: false };
}

// The parameter list of a function or class (its constructor; one inherited when it has none).
export function parameterText(fn) {
  let source = stripComments(Function.prototype.toString.call(fn));
  if (/^class\b/.test(source)) {
    const at = source.search(/\bconstructor\s*\(/);
    if (at < 0) {
      const parent = Object.getPrototypeOf(fn);
      return parent && parent !== Function.prototype ? parameterText(parent) : '';
    }
    return enclosed(source, source.indexOf('(', at));
  }
  const arrow = source.match(/^(?:async\s+)?([A-Za-z_$][\w$]*)\s*=>/);
  if (arrow) return arrow[1];
  const open = source.indexOf('(');
  return open < 0 ? '' : enclosed(source, open);
}

// What `fn` takes: { style: "positional" | "options", parameters: [{ name, optional }] }.
export function describeParameters(fn) {
  const parts = topLevel(parameterText(fn));
  if (parts.length === 1 && parts[0].startsWith('{')) {
    const whole = parameter(parts[0]);
    const inner = enclosed(whole.name.replace(/^\{/, '(').replace(/\}$/, ')'), 0);
    const options = topLevel(inner).map(parameter).filter(Boolean).map(p => ({
      name: p.name.split(':')[0].trim(), optional: p.optional || whole.optional }));
    return { style: 'options', parameters: options };
  }
  return { style: 'positional', parameters: parts.map(parameter).filter(Boolean).map(p => ({
    name: p.name.startsWith('{') || p.name.startsWith('[') ? 'message' : p.name, optional: p.optional })) };
}
