#!/usr/bin/env node
import { main } from './main.js';

// Exit explicitly: idle keep-alive sockets must not hold a scheduler's job open.
process.exit(await main(process.argv));
