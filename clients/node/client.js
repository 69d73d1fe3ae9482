// A small promise-based client of the macondo-py engine server, built at run time from the project's
// .proto with @grpc/proto-loader (no generated code), to show the API is usable from any language.
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO = path.resolve(__dirname, '..', '..', 'proto', 'macondo', 'v1', 'engine.proto');

function loadService() {
  const def = protoLoader.loadSync(PROTO, {
    keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true,
  });
  return grpc.loadPackageDefinition(def).macondo.v1.Engine;
}

class MacondoError extends Error {
  constructor(err) {
    super(err.details || err.message);
    this.code = err.code;
    this.codeName = Object.keys(grpc.status).find((k) => grpc.status[k] === err.code) || String(err.code);
  }
}

class Client {
  constructor(address = '127.0.0.1:50051', { timeoutSeconds = 60 } = {}) {
    const Engine = loadService();
    this.stub = new Engine(address, grpc.credentials.createInsecure());
    this.timeoutSeconds = timeoutSeconds;
  }

  deadline(seconds) {
    return new Date(Date.now() + 1000 * (seconds || this.timeoutSeconds));
  }

  unary(method, request) {
    return new Promise((resolve, reject) => {
      this.stub[method](request, { deadline: this.deadline() }, (err, resp) => {
        if (err) reject(new MacondoError(err)); else resolve(resp);
      });
    });
  }

  serverInfo() { return this.unary('GetServerInfo', {}); }

  generateMoves(cgp, numPlays = 15) {
    return this.unary('GenerateMoves', { position: { cgp }, num_plays: numPlays });
  }

  stopJob(jobId) { return this.unary('StopJob', { job_id: jobId }); }

  // Stream a simulation: onSnapshot(snapshot) for every progress message; resolves with the final one.
  simulate(cgp, options = {}, onSnapshot = () => {}) {
    return new Promise((resolve, reject) => {
      const call = this.stub.Simulate({ position: { cgp }, ...options });
      let last = null;
      call.on('data', (snap) => { last = snap; onSnapshot(snap, call); });
      call.on('error', (err) => reject(new MacondoError(err)));
      call.on('end', () => (last ? resolve(last) : reject(new Error('the stream ended without a result'))));
    });
  }

  close() { this.stub.close(); }
}

module.exports = { Client, MacondoError, PROTO };
