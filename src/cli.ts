#!/usr/bin/env node
import { runProcess } from './cli/run-process.js';

runProcess();
