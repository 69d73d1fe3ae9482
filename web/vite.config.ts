// The board's build: index.html + src/ -> macondo_server/data/web/ (package data, served by `macondo serve --web`). The typed client is
// taken from clients/ts/src (generated from proto/ by `npm run generate` there); its npm dependencies are
// resolved from this package so there is one copy of each.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  base: "./",
  resolve: {
    alias: { "@macondo/client": fileURLToPath(new URL("../clients/ts/src/index.ts", import.meta.url)) },
    dedupe: ["@bufbuild/protobuf", "@connectrpc/connect", "@connectrpc/connect-web"],
  },
  build: { outDir: "../macondo_server/data/web", emptyOutDir: true, target: "es2022", sourcemap: false },
});
