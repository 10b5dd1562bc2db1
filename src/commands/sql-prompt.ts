import { appendFileSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { QueryError, ReadOnlyRefusal, type WarehouseReader } from '../load/warehouse-reader.js';
import { type Output, type OutputFormat, writeResult } from './result-output.js';
import { splitSql } from './sql-statements.js';

/** Where the prompt reads and writes, and how it prints. */
export interface PromptOptions {
  input: NodeJS.ReadableStream;
  output: Output & NodeJS.WritableStream;
  /** A terminal: line editing, history, Ctrl-C clears the statement being typed. */
  terminal: boolean;
  format: OutputFormat;
  maxRows: number;
  /** File the history is kept in between sessions; none keeps it for the session only. */
  historyFile?: string;
}

const HELP = `Statements end with ; and may span lines. Results print as a table (.mode csv or .mode json to change).
  .tables          the warehouse's tables
  .mode FORMAT     table, csv or json
  .help            this text
  .quit            leave (also .exit, \\q, Ctrl-D)
The session is read-only: a statement that would write is refused.
`;

/**
 * The interactive SQL prompt of `loyalty-etl sql`: reads statements line by line until one ends with `;`, runs
 * each on `reader` and prints its result; an error is printed and the prompt goes on. Resolves when the input ends
 * or the analyst leaves.
 */
export async function runSqlPrompt(reader: WarehouseReader, options: PromptOptions): Promise<void> {
  const out = options.output;
  let format = options.format;
  const rl = createInterface({
    input: options.input,
    output: options.output,
    terminal: options.terminal,
    history: readHistory(options.historyFile),
    historySize: 1000,
    removeHistoryDuplicates: true,
  });
  let buffer = '';
  const prompt = () => {
    rl.setPrompt(buffer === '' ? 'loyalty> ' : '     ...> ');
    rl.prompt();
  };
  rl.on('SIGINT', () => {
    if (buffer === '') out.write('\n(.quit to leave)\n');
    else out.write('^C\n');
    buffer = '';
    prompt();
  });
  out.write(`${reader.describe()}; statements end with ;  .help for help\n`);
  prompt();
  try {
    for await (const line of rl) {
      if (buffer === '' && /^\s*(\.|\\q)/.test(line)) {
        const [command, argument] = line.trim().split(/\s+/);
        if (command === '.quit' || command === '.exit' || command === '\\q') break;
        if (command === '.help') out.write(HELP);
        else if (command === '.tables') await run(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name`);
        else if (command === '.mode' && (argument === 'table' || argument === 'csv' || argument === 'json')) format = argument;
        else out.write(`error: unknown command ${line.trim()} (.help lists them)\n`);
        prompt();
        continue;
      }
      buffer = buffer === '' ? line : `${buffer}\n${line}`;
      const split = splitSql(buffer);
      // a blank line or a comment alone is no statement to wait for
      if (split.statements.length === 0) buffer = '';
      if (!split.complete) {
        prompt();
        continue;
      }
      remember(options.historyFile, buffer);
      buffer = '';
      for (const statement of split.statements) if (!(await run(statement))) break;
      prompt();
    }
  } finally {
    rl.close();
  }

  /** Runs one statement and prints its result or its error; false when it failed. */
  async function run(statement: string): Promise<boolean> {
    try {
      await writeResult(await reader.execute(statement), format, out, { maxRows: options.maxRows });
      return true;
    } catch (error) {
      if (!(error instanceof ReadOnlyRefusal || error instanceof QueryError)) throw error;
      out.write(`error: ${error.message}\n`);
      return false;
    }
  }
}

/** The saved history, newest first, as readline wants it. */
function readHistory(file: string | undefined): string[] {
  if (!file) return [];
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .slice(-1000)
      .reverse();
  } catch {
    return [];
  }
}

/** Saves an entry on one line; a history that cannot be written is no reason to stop. */
function remember(file: string | undefined, entry: string): void {
  if (!file) return;
  try {
    appendFileSync(file, `${entry.replace(/\s*\n\s*/g, ' ')}\n`, { mode: 0o600 });
  } catch {
    // the prompt works without it
  }
}
