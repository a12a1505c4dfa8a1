// The rows of a `mysqldump` file: its `INSERT INTO` statements, each row keyed by column name (from the
// statement's own column list, `--complete-insert`, or else from the table's `CREATE TABLE` in the same
// file, which mysqldump writes by default). Values: NULL, numbers and quoted strings with MySQL's escapes.
// Everything else in the file (comments, SET, LOCK TABLES, ...) is skipped.

export type SqlValue = string | number | null;
export type SqlRow = Record<string, SqlValue>;

const ESCAPES: Record<string, string> = { '0': '\0', b: '\b', n: '\n', r: '\r', t: '\t', Z: '\x1a' };

/** A reader over the dump's text: what the statements are made of. */
class Cursor {
  at = 0;
  constructor(readonly text: string) {}
  skipSpace() {
    while (/\s/.test(this.text[this.at] ?? '')) this.at++;
  }
  expect(char: string) {
    this.skipSpace();
    if (this.text[this.at] !== char) throw new Error(`dump: expected "${char}" at offset ${this.at}`);
    this.at++;
  }
  identifier(): string {
    this.skipSpace();
    const quoted = this.text[this.at] === '`';
    const end = quoted
      ? this.text.indexOf('`', this.at + 1)
      : this.text.slice(this.at).search(/[\s,()]/) + this.at;
    const name = this.text.slice(quoted ? this.at + 1 : this.at, end);
    this.at = quoted ? end + 1 : end;
    return name;
  }
  value(): SqlValue {
    this.skipSpace();
    const quote = this.text[this.at];
    if (quote === "'" || quote === '"') return this.string(quote);
    const match = /^[^,)\s]+/.exec(this.text.slice(this.at, this.at + 64));
    if (!match) throw new Error(`dump: a value expected at offset ${this.at}`);
    this.at += match[0].length;
    if (match[0].toUpperCase() === 'NULL') return null;
    const number = Number(match[0]);
    return Number.isFinite(number) ? number : match[0];
  }
  private string(quote: string): string {
    let out = '';
    for (this.at++; this.at < this.text.length; this.at++) {
      const char = this.text[this.at]!;
      if (char === '\\') {
        const next = this.text[++this.at] ?? '';
        out += ESCAPES[next] ?? next;
      } else if (char === quote && this.text[this.at + 1] === quote) {
        out += quote;
        this.at++;
      } else if (char === quote) {
        this.at++;
        return out;
      } else out += char;
    }
    throw new Error('dump: a string is not closed');
  }
}

/** The column names of each `CREATE TABLE` in the dump, in order. */
function createdColumns(text: string): Map<string, string[]> {
  const tables = new Map<string, string[]>();
  for (const match of text.matchAll(/CREATE TABLE\s+(?:IF NOT EXISTS\s+)?`?(\w+)`?\s*\(([\s\S]*?)\n\)/gi)) {
    const columns = [...match[2]!.matchAll(/^\s*`(\w+)`/gm)].map((column) => column[1]!);
    tables.set(match[1]!, columns);
  }
  return tables;
}

/** Every row the dump inserts, by table name. */
export function parseSqlDump(text: string): Map<string, SqlRow[]> {
  const declared = createdColumns(text);
  const rows = new Map<string, SqlRow[]>();
  for (const match of text.matchAll(/INSERT\s+(?:IGNORE\s+)?INTO\s+/gi)) {
    const cursor = new Cursor(text);
    cursor.at = match.index + match[0].length;
    const table = cursor.identifier();
    cursor.skipSpace();
    let columns = declared.get(table);
    if (text[cursor.at] === '(') {
      cursor.at++;
      columns = [];
      do columns.push(cursor.identifier());
      while (text[cursor.at] === ',' && ++cursor.at);
      cursor.expect(')');
    }
    if (!columns)
      throw new Error(`dump: no columns known for table ${table} (use mysqldump --complete-insert)`);
    cursor.skipSpace();
    cursor.at += 'VALUES'.length;
    const list = rows.get(table) ?? [];
    rows.set(table, list);
    do {
      cursor.expect('(');
      const row: SqlRow = {};
      columns.forEach((column, index) => {
        if (index > 0) cursor.expect(',');
        row[column] = cursor.value();
      });
      cursor.expect(')');
      list.push(row);
      cursor.skipSpace();
    } while (text[cursor.at] === ',' && ++cursor.at);
  }
  return rows;
}
