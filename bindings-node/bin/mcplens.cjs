#!/usr/bin/env node
// The `mcplens` command line (`npx mcplens …` after `npm install mcplens`): it runs in the native
// addon, the same as the `mcplens` binary of the Rust CLI.
'use strict';
const { cliMain } = require('../native.js');

process.exitCode = cliMain(['mcplens', ...process.argv.slice(2)]);
