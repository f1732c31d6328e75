// examples/readme/approvals/worker.js — a code worker; the host decides every approval
import { defineWorker } from "mountbox/worker";

export default defineWorker(async (_input, ctx) => {
  const todo = await ctx.sandbox.readFile("/notes/todo.md"); // no approval needed to read
  await ctx.sandbox.writeFile("/notes/done.md", todo); // write_approval: the host asks
  const plan = await ctx.sandbox.readFile("/drafts/plan.md"); // outside its sandbox: "expand"
  let refused = "";
  try {
    await ctx.sandbox.remove("/notes/todo.md"); // the approver says no
  } catch (e) {
    refused = e.code;
  }
  const { readable } = await ctx.sandbox.describe(); // the session grant shows here
  return { plan: plan.trim(), refused, readable };
});
