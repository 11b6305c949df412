// Runs SQL against a real ClickHouse (26.7, the library inside the npm package chdb) on one
// data folder, in one process, statement after statement.
// Usage: node chsql.js DATA_DIR [--engine-arg ...] [-q SQL]...   (statements from stdin without -q)
//   DATA_DIR      the server's data folder (`path`); created if missing
//   --engine-arg  passed to the engine as clickhouse-local takes it (--config-file=FILE,
//                 --backups.allowed_path=DIR/, ...)
// Statements read from stdin end with a ';' at the end of a line. A statement that starts with
// '!' is a shell command (run with sh -c; its failure stops the run), so that files can be
// copied at the moment between two statements. Each result is printed as TSV. A failing
// statement prints ClickHouse's message on stderr and exits 1.
// The engine runs with no AWS_* variables in its environment (CHSQL_KEEP_AWS=1 keeps them),
// so that a restore from S3 is signed only with what the statement gives.
// CHDB_MODULE names the chdb package folder (scripts/install-clickhouse.sh prints it).
'use strict';
const fs = require('fs');
const { execSync } = require('child_process');

function parseArgs(argv) {
  const out = { dir: argv[0], engine: [], queries: [] };
  for (let i = 1; i < argv.length; i++) {
    if (argv[i] === '-q') out.queries.push(argv[++i]);
    else out.engine.push(argv[i]);
  }
  return out;
}

function statementsOf(text) {
  return text.split(/;[ \t]*\n/).map((s) => s.trim().replace(/;$/, '')).filter((s) => s.length);
}

function main() {
  const a = parseArgs(process.argv.slice(2));
  if (!a.dir) {
    process.stderr.write('usage: chsql.js DATA_DIR [--engine-arg ...] [-q SQL]...\n');
    process.exit(2);
  }
  const { Session } = require(process.env.CHDB_MODULE || 'chdb');
  const queries = a.queries.length ? a.queries : statementsOf(fs.readFileSync(0, 'utf8'));
  const shellEnv = { ...process.env };
  if (process.env.CHSQL_KEEP_AWS !== '1') {
    for (const k of Object.keys(process.env)) if (k.startsWith('AWS_')) delete process.env[k];
  }
  fs.mkdirSync(a.dir, { recursive: true });
  const session = new Session(a.dir, { connectionArgs: a.engine });
  let status = 0;
  for (const q of queries) {
    try {
      if (q.startsWith('!')) {
        execSync(q.slice(1), { stdio: 'inherit', env: shellEnv, shell: '/bin/sh' });
      } else {
        process.stdout.write(session.query(q, 'TSV'));
      }
    } catch (e) {
      process.stderr.write(`chsql: ${q.slice(0, 300)}\n  ${String(e.message || e).trim()}\n`);
      status = 1;
      break;
    }
  }
  session.close();
  process.exit(status);
}

main();
