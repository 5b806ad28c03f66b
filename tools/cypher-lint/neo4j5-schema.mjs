// The dbSchema that lint.mjs hands to lintCypherQuery: what a Neo4j 5 server exposes to the
// Cypher 5 dialect, restricted to what kgrag may call.
//
// Shape: `DbSchema` in @neo4j-cypher/language-support (src/dbSchema.ts); procedures and functions
// are registries keyed first by Cypher version ('CYPHER 5') and then by qualified name, whose values
// follow `Neo4jProcedure` / `Neo4jFunction` (src/types.ts). The semantic analyser reads
// argumentDescription (name, type, default "DefaultParameterValue{value=..., type=...}") and
// returnDescription, so argument counts, argument types and YIELD columns are all checked.
//
// Procedures are declared here by hand: a call to anything not listed is an error, which is the
// point (a misspelt or APOC-only procedure must not reach a production server). Add a procedure
// here when kgrag starts using one.
//
// Built-in functions (count, coalesce, elementId, vector.similarity.cosine, ...) are the
// `isBuiltIn` entries of the Cypher 5 function registry the package ships as `testData.mockSchema`
// (dumped from a real server by Neo4j; pinned by package-lock.json). Plugin functions (apoc.*) are
// left out on purpose.

import { testData } from '@neo4j-cypher/language-support';

export const CYPHER_VERSION = 'CYPHER 5';
/** The dialect of the version overlays in cypher/neo4j_search/ (Neo4j 2026.01+, SEARCH clause). */
export const CYPHER_25 = 'CYPHER 25';
/** Procedures deprecated in Cypher 25 (Neo4j 2026.04) in favour of the SEARCH clause. */
const DEPRECATED_IN_25 = new Set(['db.index.vector.queryNodes', 'db.index.vector.queryRelationships']);

/** @param {string} name @param {string} type @param {string} [defaultValue] Cypher literal */
function arg(name, type, defaultValue) {
  const a = { name, type, description: '', isDeprecated: false };
  if (defaultValue !== undefined) {
    a.default = `DefaultParameterValue{value=${defaultValue}, type=${type}}`;
  }
  return a;
}

/** @param {string} name @param {string} type */
function out(name, type) {
  return { name, type, description: '', isDeprecated: false };
}

function signatureOf(name, args, returns) {
  const argText = args
    .map((a) => {
      const dflt = /value=(.*), type=/.exec(a.default ?? '');
      return dflt ? `${a.name} = ${dflt[1]} :: ${a.type}` : `${a.name} :: ${a.type}`;
    })
    .join(', ');
  const retText = returns.map((r) => `${r.name} :: ${r.type}`).join(', ');
  return `${name}(${argText})` + (returns.length ? ` :: (${retText})` : '');
}

/**
 * @param {{name: string, mode: 'READ'|'WRITE'|'SCHEMA'|'DBMS', description: string,
 *          args?: object[], returns?: object[], deprecatedBy?: string}} p
 */
function procedure({ name, mode, description, args = [], returns = [], deprecatedBy }) {
  return {
    name,
    description,
    mode,
    worksOnSystem: mode === 'DBMS',
    argumentDescription: args,
    returnDescription: returns,
    signature: signatureOf(name, args, returns),
    admin: false,
    option: { deprecated: deprecatedBy !== undefined },
    ...(deprecatedBy !== undefined ? { deprecatedBy } : {}),
  };
}

/** Neo4j 5 procedures kgrag may call, with their Neo4j 5 signatures. */
export const PROCEDURES = [
  procedure({
    name: 'db.index.vector.queryNodes',
    mode: 'READ',
    description:
      'k nearest neighbours of a vector in a node vector index. Deprecated on Neo4j 2026.04+ ' +
      '(SEARCH clause); kgrag uses it on Neo4j 5 servers, so it is not marked deprecated here.',
    args: [
      arg('indexName', 'STRING'),
      arg('numberOfNearestNeighbours', 'INTEGER'),
      arg('query', 'LIST<FLOAT>'),
    ],
    returns: [out('node', 'NODE'), out('score', 'FLOAT')],
  }),
  procedure({
    name: 'db.index.vector.queryRelationships',
    mode: 'READ',
    description: 'k nearest neighbours of a vector in a relationship vector index.',
    args: [
      arg('indexName', 'STRING'),
      arg('numberOfNearestNeighbours', 'INTEGER'),
      arg('query', 'LIST<FLOAT>'),
    ],
    returns: [out('relationship', 'RELATIONSHIP'), out('score', 'FLOAT')],
  }),
  procedure({
    name: 'db.index.fulltext.queryNodes',
    mode: 'READ',
    description: 'Query a full-text node index (Lucene syntax).',
    args: [arg('indexName', 'STRING'), arg('queryString', 'STRING'), arg('options', 'MAP', '{}')],
    returns: [out('node', 'NODE'), out('score', 'FLOAT')],
  }),
  procedure({
    name: 'db.index.fulltext.queryRelationships',
    mode: 'READ',
    description: 'Query a full-text relationship index (Lucene syntax).',
    args: [arg('indexName', 'STRING'), arg('queryString', 'STRING'), arg('options', 'MAP', '{}')],
    returns: [out('relationship', 'RELATIONSHIP'), out('score', 'FLOAT')],
  }),
  procedure({
    name: 'db.create.setNodeVectorProperty',
    mode: 'WRITE',
    description: 'Set a vector property on a node, validated and stored as a float array.',
    args: [arg('node', 'NODE'), arg('key', 'STRING'), arg('vector', 'LIST<FLOAT>')],
  }),
  procedure({
    name: 'db.awaitIndexes',
    mode: 'READ',
    description: 'Wait for all indexes to come online.',
    args: [arg('timeOutSeconds', 'INTEGER', '300')],
  }),
  procedure({
    name: 'db.awaitIndex',
    mode: 'READ',
    description: 'Wait for one index to come online.',
    args: [arg('indexName', 'STRING'), arg('timeOutSeconds', 'INTEGER', '300')],
  }),
  procedure({
    name: 'db.labels',
    mode: 'READ',
    description: 'All node labels in the database.',
    returns: [out('label', 'STRING')],
  }),
  procedure({
    name: 'db.relationshipTypes',
    mode: 'READ',
    description: 'All relationship types in the database.',
    returns: [out('relationshipType', 'STRING')],
  }),
  procedure({
    name: 'db.propertyKeys',
    mode: 'READ',
    description: 'All property keys in the database.',
    returns: [out('propertyKey', 'STRING')],
  }),
  procedure({
    name: 'db.ping',
    mode: 'READ',
    description: 'Whether the database is reachable.',
    returns: [out('success', 'BOOLEAN')],
  }),
  procedure({
    name: 'db.info',
    mode: 'READ',
    description: 'Information about the current database.',
    returns: [out('id', 'STRING'), out('name', 'STRING'), out('creationDate', 'STRING')],
  }),
  procedure({
    name: 'dbms.components',
    mode: 'DBMS',
    description: 'Kernel version and edition of the DBMS.',
    returns: [out('name', 'STRING'), out('versions', 'LIST<STRING>'), out('edition', 'STRING')],
  }),
];

/** Built-in Cypher 5 functions, from the package's own server dump (see the header). */
function builtinFunctions(version) {
  return Object.values(testData.mockSchema.functions[version] ?? {})
    .filter((f) => f.isBuiltIn)
    .map((f) => ({
    name: f.name,
    category: f.category,
    description: f.description,
    isBuiltIn: true,
    argumentDescription: f.argumentDescription,
    returnDescription: f.returnDescription,
    signature: f.signature,
      aggregating: f.aggregating,
      isDeprecated: f.isDeprecated,
      ...(f.deprecatedBy ? { deprecatedBy: f.deprecatedBy } : {}),
    }));
}

export const BUILTIN_FUNCTIONS = builtinFunctions(CYPHER_VERSION);
export const BUILTIN_FUNCTIONS_25 = builtinFunctions(CYPHER_25);

for (const [version, fns] of [
  [CYPHER_VERSION, BUILTIN_FUNCTIONS],
  [CYPHER_25, BUILTIN_FUNCTIONS_25],
]) {
  if (fns.length < 100 || !fns.some((f) => f.name === 'count')) {
    // A future version of the package might drop or reshape testData; fail loudly, not vacuously.
    throw new Error(
      `neo4j5-schema: expected the built-in ${version} functions in testData.mockSchema, ` +
        `found ${fns.length}; see tools/cypher-lint/README.md`,
    );
  }
}

/**
 * The DbSchema for one file.
 * @param {string[]} parameterNames the `$name`s the file uses; all declared (value unknown).
 */
export function neo4j5Schema(parameterNames = []) {
  return {
    defaultLanguage: CYPHER_VERSION,
    procedures: PROCEDURE_REGISTRY,
    functions: FUNCTION_REGISTRY,
    parameters: Object.fromEntries(parameterNames.map((n) => [n, null])),
  };
}

const PROCEDURE_REGISTRY = {
  [CYPHER_VERSION]: Object.fromEntries(PROCEDURES.map((p) => [p.name, p])),
};
const FUNCTION_REGISTRY = {
  [CYPHER_VERSION]: Object.fromEntries(BUILTIN_FUNCTIONS.map((f) => [f.name, f])),
};

/** kgrag's procedures as Cypher 25 sees them: the vector procedures are deprecated there. */
const PROCEDURES_25 = PROCEDURES.map((p) =>
  DEPRECATED_IN_25.has(p.name)
    ? { ...p, option: { deprecated: true }, deprecatedBy: 'the SEARCH clause' }
    : p,
);
const PROCEDURE_REGISTRY_25 = {
  [CYPHER_25]: Object.fromEntries(PROCEDURES_25.map((p) => [p.name, p])),
};
const FUNCTION_REGISTRY_25 = {
  [CYPHER_25]: Object.fromEntries(BUILTIN_FUNCTIONS_25.map((f) => [f.name, f])),
};

/**
 * The DbSchema for one file of a Cypher 25 overlay (cypher/neo4j_search/): Cypher 25 built-in
 * functions, the same hand-declared procedures (vector ones deprecated).
 * @param {string[]} parameterNames the `$name`s the file uses; all declared (value unknown).
 */
export function neo4j25Schema(parameterNames = []) {
  return {
    defaultLanguage: CYPHER_25,
    procedures: PROCEDURE_REGISTRY_25,
    functions: FUNCTION_REGISTRY_25,
    parameters: Object.fromEntries(parameterNames.map((n) => [n, null])),
  };
}
