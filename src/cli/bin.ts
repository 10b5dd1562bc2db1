#!/usr/bin/env node
import { setFlagsFromString } from 'node:v8';
import { main } from './main.js';

// A backfill allocates a lot and keeps little (a page and a batch per span in flight). By default V8 lets the
// heap grow to several times what is alive before it collects, so the longer a run, the more memory it holds;
// growing it by half of what is alive keeps the peak bounded by the work in flight, not by the range, at the
// cost of a few more (short) collections. The setting is read at every collection, so it applies from here on.
setFlagsFromString('--heap-growing-percent=50');

// Exit explicitly: idle keep-alive sockets must not hold a scheduler's job open.
process.exit(await main(process.argv));
