// examples/readme/commonjs/workers/count.js — a CommonJS worker
const { defineWorker } = require("mountbox/worker");

module.exports = defineWorker(async (_input, ctx) => (await ctx.sandbox.listFiles("/")).length);
