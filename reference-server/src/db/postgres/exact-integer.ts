/**
 * A `bigint` column as a JavaScript number, exactly or not at all. `pg` hands `bigint` back as a string (it
 * cannot know the value fits a number); every time, sequence and amount the service writes does fit, since it
 * wrote them from numbers. A value that does not (written by hand past 2^53) is refused with a RangeError
 * rather than rounded: a rounded amount would be a wrong amount. `integer` columns arrive as numbers and pass.
 *
 * @example
 * exactInteger('9007199254740991'); // 9007199254740991
 * exactInteger('9007199254740993'); // throws RangeError: no number holds it
 */
export function exactInteger(value: string | number): number {
  if (typeof value === 'number') return value;
  const number = Number(value);
  // Compared as text: `Number` rounds silently, and a bigint column never prints in exponent notation.
  if (String(number) !== value) {
    throw new RangeError(`the stored integer ${value} has no exact JavaScript number`);
  }
  return number;
}

/**
 * `exactInteger` for a nullable column: null stays null.
 *
 * @example
 * exactIntegerOrNull(row.paid_at); // null, or the epoch milliseconds as a number
 */
export function exactIntegerOrNull(value: string | number | null): number | null {
  return value === null ? null : exactInteger(value);
}
