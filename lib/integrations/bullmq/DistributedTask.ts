/** One task of a distributed batch: data only (JSON), from which a worker builds the agent. */
export interface DistributedTask {
  /** Unique within the batch; names the run in the report and its history file. */
  id: string;
  /** The user message the run starts with. */
  input: string;
  /** Anything the worker's `agent` factory needs (a repository, a sandbox image): JSON. */
  payload?: unknown;
}
