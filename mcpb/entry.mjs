// The MCP Bundle's entry point. The host (Claude Desktop) starts it with the manifest's `mcp_config.args`, in which
// each `${user_config.NAME}` was replaced by the person's setting: a folder list expands to one argument per folder,
// a switch becomes "true" or "false", and a setting left empty stays as the literal `${user_config.NAME}`. This turns
// those arguments into the CLI's own flags and runs the CLI in this process, so the host's pipes are the server's.
const args = process.argv.slice(2);
const unset = (value) => value === undefined || value === '' || /^\$\{user_config\.[^}]+\}$/.test(value);

const flags = ['serve'];
for (let i = 0; i < args.length; i += 1) {
  const name = args[i];
  if (name === '--skills') {
    // Last in the list: every argument after it is a skills folder.
    for (const dir of args.slice(i + 1)) if (!unset(dir)) flags.push('--skills', dir);
    break;
  }
  const value = args[i + 1];
  i += 1;
  if (name === '--workspace' && !unset(value)) flags.push('--workspace', value);
  else if (name === '--approval-console' && value === 'true') flags.push('--approval-console');
}

process.argv = [process.argv[0], new URL('./dist/cli.js', import.meta.url).pathname, ...flags];
await import('./dist/cli.js');
