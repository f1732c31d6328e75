// examples/readme/commonjs/host.js — in an app made with `npm init -y`: node host.js
const { createHost } = require("mountbox");

(async () => {
  const host = await createHost({
    sandbox: { root: "../project", readonly: true },
    basePath: __dirname,
    workers: {
      count: { module: "./workers/count.js" }, // CommonJS
      firstLine: { module: "./workers/first-line.mjs" }, // an ES module: .mjs
    },
  });
  const files = await host.run("count");
  const firstLine = await host.run("firstLine", "/src/a.ts");
  console.log(JSON.stringify({ files, firstLine }));
  await host.close();
})();
