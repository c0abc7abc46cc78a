/**
 * The library's version, written into the first line of every history file so that a file
 * found later says which code produced it. A test keeps it equal to package.json's.
 */
export const VERSION = '0.1.0';
