#!/usr/bin/env node
// Lint kgrag's Cypher files with Neo4j's own language service (@neo4j-cypher/language-support).
//
//   node tools/cypher-lint/lint.mjs [--strict] [--cypher 25] [PATH ...]
//
// PATH is a directory (every *.cypher directly in it; subfolders such as cypher/falkordb/ are not
// linted) or a single .cypher file. Default: the repository's cypher/ directory.
// --cypher 25 lints the Cypher 25 overlays (cypher/neo4j_search/, Neo4j 2026.01+): each statement
// must start with `CYPHER 25` and is checked as Cypher 25 (vector procedures are deprecated there).
// Prints `file:line:col: severity: message` per diagnostic, then
// `cypher-lint: N files, E errors, W warnings`. Exit 0 when there is no error, 1 on any error
// (with --strict, also on any warning), 2 on bad usage (missing path).
// See README.md next to this file for what is checked.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  lintCypherQuery,
  parseParameters,
  parseStatementsStrs,
} from '@neo4j-cypher/language-support';

import { CYPHER_25, CYPHER_VERSION, neo4j25Schema, neo4j5Schema } from './neo4j5-schema.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DEFAULT_DIR = path.resolve(HERE, '..', '..', 'cypher');
const SEVERITY = { 1: 'error', 2: 'warning', 3: 'info', 4: 'hint' };

/** Text with // and /* *\/ comments removed (good enough to tell an empty chunk from a statement). */
function withoutComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/\/\/[^\n]*/g, ' ');
}

/** Diagnostics that are about the file as a whole rather than a position the library reports. */
function fileLevelDiagnostics(text, language) {
  const diags = [];
  const statements = parseStatementsStrs(text).filter((s) => withoutComments(s).trim() !== '');
  if (statements.length === 0) {
    diags.push({ line: 1, col: 1, severity: 'error', message: 'file holds no Cypher statement' });
  } else if (statements.length > 1) {
    diags.push({
      line: 1,
      col: 1,
      severity: 'error',
      message:
        `file holds ${statements.length} statements; cypher/ keeps one statement per file ` +
        '(a driver call runs one statement)',
    });
  }
  for (const statement of statements) {
    const version = /^\s*CYPHER\s+(\d+)\b/i.exec(withoutComments(statement));
    if (language === CYPHER_25) {
      if (!version || `CYPHER ${version[1]}` !== CYPHER_25) {
        diags.push({
          line: 1,
          col: 1,
          severity: 'error',
          message:
            'a Cypher 25 overlay statement must start with `CYPHER 25` (databases created ' +
            'before Neo4j 2026.02 default to Cypher 5, where SEARCH is a syntax error)',
        });
      }
    } else if (version && `CYPHER ${version[1]}` !== CYPHER_VERSION) {
      diags.push({
        line: 1,
        col: 1,
        severity: 'error',
        message:
          `statement selects CYPHER ${version[1]}; cypher/ is the Neo4j 5 dialect ` +
          `(${CYPHER_VERSION}), linted against Neo4j 5 procedures and functions`,
      });
    }
  }
  return diags;
}

/** All diagnostics for one file, as {line, col (1-based), severity, message}. */
export function lintText(text, language = CYPHER_VERSION) {
  const params = parseParameters(text, false);
  const schema = language === CYPHER_25 ? neo4j25Schema(params) : neo4j5Schema(params);
  const { diagnostics } = lintCypherQuery(text, schema, {
    consoleCommandsEnabled: false,
  });
  const seen = new Set();
  const out = fileLevelDiagnostics(text, language);
  for (const d of diagnostics) {
    const line = Math.max(d.range.start.line, 0) + 1;
    const col = Math.max(d.range.start.character, 0) + 1;
    const severity = SEVERITY[d.severity] ?? 'error';
    const message = d.message.replace(/\s*\n\s*/g, ' ').trim();
    const key = `${line}:${col}:${severity}:${message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push({ line, col, severity, message });
    }
  }
  return out.sort((a, b) => a.line - b.line || a.col - b.col);
}

function cypherFilesIn(target) {
  const st = statSync(target, { throwIfNoEntry: false });
  if (!st) return null;
  if (st.isFile()) return [target];
  return readdirSync(target, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.cypher'))
    .map((e) => path.join(target, e.name))
    .sort();
}

const USAGE = 'usage: node tools/cypher-lint/lint.mjs [--strict] [--cypher 5|25] [DIR|FILE ...]\n';

function main(argv) {
  let strict = false;
  let language = CYPHER_VERSION;
  const targets = [];
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    if (a === '--strict') {
      strict = true;
    } else if (a === '--cypher' || a.startsWith('--cypher=')) {
      const v = a === '--cypher' ? argv[(i += 1)] : a.slice('--cypher='.length);
      if (v !== '5' && v !== '25') {
        process.stderr.write(USAGE);
        return 2;
      }
      language = `CYPHER ${v}`;
    } else {
      targets.push(a);
    }
  }
  if (targets.some((t) => t.startsWith('-'))) {
    process.stderr.write(USAGE);
    return 2;
  }
  const files = [];
  for (const target of targets.length ? targets : [DEFAULT_DIR]) {
    const found = cypherFilesIn(target);
    if (found === null) {
      process.stderr.write(`cypher-lint: ${target}: no such file or directory\n`);
      return 2;
    }
    files.push(...found);
  }

  let errors = 0;
  let warnings = 0;
  for (const file of files) {
    const rel = path.relative(process.cwd(), file);
    const shown = rel && !rel.startsWith('..') ? rel : path.resolve(file);
    for (const d of lintText(readFileSync(file, 'utf8'), language)) {
      if (d.severity === 'error') errors += 1;
      else if (d.severity === 'warning') warnings += 1;
      process.stdout.write(`${shown}:${d.line}:${d.col}: ${d.severity}: ${d.message}\n`);
    }
  }
  process.stdout.write(`cypher-lint: ${files.length} files, ${errors} errors, ${warnings} warnings\n`);
  return errors > 0 || (strict && warnings > 0) ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
