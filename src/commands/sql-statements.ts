import { postgreSplitterOptions, splitQuery } from 'dbgate-query-splitter';

/** What an analyst typed, as statements. */
export interface SplitSql {
  statements: string[];
  /** The last statement ends with `;`: a prompt runs what it holds instead of asking for the next line. */
  complete: boolean;
}

const OPTIONS = { ...postgreSplitterOptions, returnRichInfo: true, ignoreComments: true } as const;
const COMMENTS = /--[^\n]*|\/\*[\s\S]*?\*\//g;

/**
 * Splits SQL text on the `;` that end statements, not those in strings, quoted names, `$$` bodies or comments
 * (PostgreSQL's lexical rules, which DuckDB's SQL shares); pieces holding nothing but comments are dropped.
 *
 * @example splitSql("SELECT ';'; SELECT 2") // { statements: ["SELECT ';'", 'SELECT 2'], complete: false }
 */
export function splitSql(text: string): SplitSql {
  const pieces = splitQuery(text, OPTIONS) as unknown as Array<{ text: string; end: { position: number } }>;
  const real = pieces.filter((p) => p.text.replace(COMMENTS, '').trim() !== '');
  const last = real.at(-1);
  return {
    statements: real.map((p) => p.text.trim()),
    complete: last !== undefined && text.slice(last.end.position).trimStart().startsWith(';'),
  };
}
