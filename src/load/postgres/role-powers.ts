/** What the role of a PostgreSQL session may do beyond reading the warehouse's tables. */
export interface RolePowers {
  role: string;
  superuser: boolean;
  /** Member of `pg_signal_backend`: may cancel or end other sessions (the pipeline's among them). */
  signalsSessions: boolean;
  /** May read or write files of the server (`pg_read_server_files`, `pg_write_server_files`). */
  serverFiles: boolean;
  /** May run programs on the server (`pg_execute_server_program`, e.g. `COPY … TO PROGRAM`). */
  serverPrograms: boolean;
  /** May insert, update, delete or truncate a table of the schema, or create objects in it. */
  writes: boolean;
}

/** Runs one query and gives its rows; both the pipeline's connections and the reader's client fit. */
export type RowQuery = <T>(sql: string, params: unknown[]) => Promise<T[]>;

/** Reads what the session's role may do, in `schema`. */
export async function readRolePowers(query: RowQuery, schema: string): Promise<RolePowers> {
  const [row] = await query<{
    role: string;
    superuser: boolean;
    signal: boolean;
    read_files: boolean;
    write_files: boolean;
    programs: boolean;
    writes: boolean;
  }>(
    `SELECT current_user AS role, r.rolsuper AS superuser,
            pg_has_role(current_user, 'pg_signal_backend', 'USAGE') AS signal,
            pg_has_role(current_user, 'pg_read_server_files', 'USAGE') AS read_files,
            pg_has_role(current_user, 'pg_write_server_files', 'USAGE') AS write_files,
            pg_has_role(current_user, 'pg_execute_server_program', 'USAGE') AS programs,
            COALESCE((SELECT has_schema_privilege(n.oid, 'CREATE') OR bool_or(has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE'))
                        FROM pg_namespace n LEFT JOIN pg_class c ON c.relnamespace = n.oid AND c.relkind IN ('r', 'p')
                       WHERE n.nspname = $1 GROUP BY n.oid), false) AS writes
       FROM pg_roles r WHERE r.rolname = current_user`,
    [schema],
  );
  return {
    role: row?.role ?? '?',
    superuser: row?.superuser === true,
    signalsSessions: row?.signal === true,
    serverFiles: row?.read_files === true || row?.write_files === true,
    serverPrograms: row?.programs === true,
    writes: row?.writes === true,
  };
}

/**
 * What a role may do that a warehouse shared with analysts should not allow, in words (empty when nothing).
 * `forReaders` counts writing too: the pipeline's role must write, an analyst's must not.
 */
export function excessPowers(powers: RolePowers, forReaders: boolean): string[] {
  if (powers.superuser)
    return ['is a superuser (it can read and write any file of the server, run programs there, and end any session)'];
  return [
    forReaders && powers.writes && 'can write to the warehouse’s tables',
    powers.signalsSessions && 'can end other sessions, the pipeline’s among them (pg_signal_backend)',
    powers.serverFiles && 'can read or write files of the server (pg_read_server_files / pg_write_server_files)',
    powers.serverPrograms && 'can run programs on the server (pg_execute_server_program)',
  ].filter((p): p is string => typeof p === 'string');
}
