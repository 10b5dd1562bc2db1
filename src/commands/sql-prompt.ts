import { appendFileSync, readFileSync } from 'node:fs';
import { createInterface, type Interface } from 'node:readline';
import { type WarehouseReader } from '../load/warehouse/warehouse-reader.js';
import { type Output, type OutputFormat, writeResult } from './result-output.js';
import { splitSql } from './sql-statements.js';
import { QueryError, ReadOnlyRefusal } from '../load/warehouse/warehouse-errors.js';

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
  .tables          the warehouse's tables and views, with their descriptions
  .describe NAME   a table's or view's columns, types and descriptions (also \\d NAME)
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
  const rl = createInterface({
    input: options.input,
    output: options.output,
    terminal: options.terminal,
    history: readHistory(options.historyFile),
    historySize: 1000,
    removeHistoryDuplicates: true,
  });
  const session = new PromptSession(reader, options, rl);
  rl.on('SIGINT', () => session.interrupt());
  options.output.write(`${reader.describe()}; statements end with ;  .help for help\n`);
  session.prompt();
  try {
    for await (const line of rl) {
      if (!(await session.take(line))) break;
      session.prompt();
    }
  } finally {
    rl.close();
  }
}

/** One prompt session: the statement being typed and the output format, line after line. */
class PromptSession {
  private format: OutputFormat;
  private buffer = '';

  constructor(
    private readonly reader: WarehouseReader,
    private readonly options: PromptOptions,
    private readonly rl: Interface,
  ) {
    this.format = options.format;
  }

  prompt(): void {
    this.rl.setPrompt(this.buffer === '' ? 'loyalty> ' : '     ...> ');
    this.rl.prompt();
  }

  /** Ctrl-C: drops the statement being typed, or reminds how to leave. */
  interrupt(): void {
    this.options.output.write(this.buffer === '' ? '\n(.quit to leave)\n' : '^C\n');
    this.buffer = '';
    this.prompt();
  }

  /** Takes one line of input; false when the analyst leaves. */
  async take(line: string): Promise<boolean> {
    if (this.buffer === '' && /^\s*(\.|\\q)/.test(line)) return this.dotCommand(line.trim());
    this.buffer = this.buffer === '' ? line : `${this.buffer}\n${line}`;
    const split = splitSql(this.buffer);
    // a blank line or a comment alone is no statement to wait for
    if (split.statements.length === 0) this.buffer = '';
    if (!split.complete) return true;
    remember(this.options.historyFile, this.buffer);
    this.buffer = '';
    for (const statement of split.statements) if (!(await this.run(statement))) break;
    return true;
  }

  private async dotCommand(line: string): Promise<boolean> {
    const [command, argument] = line.split(/\s+/);
    const out = this.options.output;
    if (command === '.quit' || command === '.exit' || command === '\\q') return false;
    if (command === '.help') out.write(HELP);
    else if (command === '.tables') await this.run(this.reader.descriptions.tables);
    else if ((command === '.describe' || command === '\\d') && argument)
      await this.run(this.reader.descriptions.columns(argument));
    else if (command === '.mode' && (argument === 'table' || argument === 'csv' || argument === 'json'))
      this.format = argument;
    else out.write(`error: unknown command ${line} (.help lists them)\n`);
    return true;
  }

  /** Runs one statement and prints its result or its error; false when it failed. */
  private async run(statement: string): Promise<boolean> {
    try {
      await writeResult(await this.reader.execute(statement), this.format, this.options.output, {
        maxRows: this.options.maxRows,
      });
      return true;
    } catch (error) {
      if (!(error instanceof ReadOnlyRefusal || error instanceof QueryError)) throw error;
      this.options.output.write(`error: ${error.message}\n`);
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
