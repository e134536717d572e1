/** A value for a reason line: as written when plain, JSON-escaped when it holds control characters or edge spaces, cut after 200 characters. */
export function shown(value: string): string {
  const cut = value.length > 200 ? `${value.slice(0, 200)}… (${value.length - 200} more characters)` : value;
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|^\s|\s$/.test(value) ? JSON.stringify(cut) : cut;
}
