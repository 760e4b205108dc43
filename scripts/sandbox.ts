/**
 * Starts the ERP sandbox: `tsx scripts/sandbox.ts --port 8080 --partners 5000 --seed 1` (see `--help`).
 *
 * Prints the base URL and the API key, then serves until SIGINT / SIGTERM.
 */
import * as Cli from "@erp-client/sandbox/Cli"

Cli.main(process.argv.slice(2))
