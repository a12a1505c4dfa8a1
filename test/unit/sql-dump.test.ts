// The mysqldump reader of the library import (docs/COMPAT.md "Importing a library"): MySQL's string escapes,
// NULLs and numbers, rows split over several INSERTs, and column names from the INSERT or its CREATE TABLE.
import { describe, expect, it } from 'vitest';
import { parseSqlDump } from '#lib/compat/import/sql-dump.ts';

describe('parseSqlDump', () => {
  it("reads rows by the CREATE TABLE's columns, with MySQL's escapes, across INSERTs", () => {
    const dump = [
      'CREATE TABLE `t` (',
      '  `id` bigint NOT NULL,',
      '  `name` varchar(9) DEFAULT NULL,',
      '  `size` decimal(8,2),',
      '  PRIMARY KEY (`id`)',
      ') ENGINE=InnoDB;',
      "INSERT INTO `t` VALUES (1,'a\\'b \\\\ c\\nd',0.07),(2,NULL,-3);",
      "INSERT INTO `t` VALUES (3,'it''s, (x)',1e3);",
    ].join('\n');

    expect(parseSqlDump(dump).get('t')).toEqual([
      { id: 1, name: "a'b \\ c\nd", size: 0.07 },
      { id: 2, name: null, size: -3 },
      { id: 3, name: "it's, (x)", size: 1000 },
    ]);
  });

  it('reads an INSERT with its own column list (--complete-insert), and names a table without columns', () => {
    expect(parseSqlDump("INSERT INTO `u` (`a`, `b`) VALUES ('x', 2);").get('u')).toEqual([{ a: 'x', b: 2 }]);
    expect(() => parseSqlDump("INSERT INTO `v` VALUES ('x');")).toThrow(/no columns known for table v/);
  });
});
