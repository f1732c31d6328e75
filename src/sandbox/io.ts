/** The sandbox's I/O operations, one module per concern. */

export { editFile } from "./io-edit.js";
export { listFiles } from "./io-list.js";
export { exists, readBytes, readText, stat } from "./io-read.js";
export { move, remove } from "./io-tree.js";
export { mkdir, writeFile } from "./io-write.js";
