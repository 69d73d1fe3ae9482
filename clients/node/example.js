#!/usr/bin/env node
// Example: generate moves for a position, then stream a simulation's progress.
//   node example.js --server 127.0.0.1:50051 [--cgp "<CGP>"] [--iterations 300] [--seed 1] [--stop-after 0.5]
'use strict';

const { Client } = require('./client');

const EMPTY_BOARD = '15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 AEINQST/ 0/0 0';

function parseArgs(argv) {
  const out = { server: '127.0.0.1:50051', cgp: EMPTY_BOARD, iterations: 300, seed: 1, stopAfter: 0, plays: 5 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`--${key} needs a value`);
    if (key === 'server' || key === 'cgp') out[key] = value;
    else if (key === 'iterations' || key === 'seed' || key === 'plays') out[key] = Number(value);
    else if (key === 'stop-after') out.stopAfter = Number(value);
    else throw new Error(`unknown option --${key}`);
  }
  return out;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const client = new Client(args.server);
  try {
    const info = await client.serverInfo();
    console.log(`server ${info.version} (${info.api_version}), default lexicon ${info.default_lexicon}`);
    const gen = await client.generateMoves(args.cgp, args.plays);
    console.log(`top ${gen.moves.length} of ${Number(gen.counts.placements) + Number(gen.counts.exchanges) + Number(gen.counts.passes)} moves:`);
    for (const m of gen.moves) {
      console.log(`  ${m.display.trim().padEnd(18)} ${String(m.score).padStart(4)} ${m.equity.toFixed(2).padStart(8)}`);
    }
    let stopSent = false;
    const started = Date.now();
    const final = await client.simulate(args.cgp, { iterations: args.iterations, seed: args.seed, num_plays: args.plays, threads: 1 },
      (snap) => {
        const lead = snap.plays[0];
        if (!snap.final) {
          console.log(`progress: ${snap.iterations} iterations, leader ${lead ? lead.move.display.trim() : '-'}`);
        }
        if (args.stopAfter > 0 && !stopSent && snap.job_id && (Date.now() - started) / 1000 >= args.stopAfter) {
          stopSent = true;
          client.stopJob(snap.job_id).catch(() => {});
        }
      });
    console.log(`final: ${final.iterations} iterations${final.stopped ? ' (stopped)' : ''}`);
    for (const p of final.plays) {
      console.log(`  ${p.move.display.trim().padEnd(18)} win ${p.win_pct.toFixed(2)}%  equity ${p.equity.toFixed(2)}`);
    }
  } finally {
    client.close();
  }
}

main().catch((err) => {
  console.error(`error: ${err.codeName ? `${err.codeName}: ` : ''}${err.message}`);
  process.exit(1);
});
