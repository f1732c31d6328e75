/** The sandbox's I/O operations, one module per concern. */
export { listFiles } from "./io-list.js";
export { exists, readBytes, readText, stat } from "./io-read.js";
export { move, remove } from "./io-tree.js";
export { editFile, mkdir, writeFile } from "./io-write.js";
