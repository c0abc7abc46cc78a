/** A tool call a run of a batch waits on, as `agent-sm approvals` lists it, whatever holds the batch. */
export interface ListedCall {
  /** The run: its task id. */
  run: string;
  callId: string;
  /** The tool's name. */
  tool: string;
  /** The call's input as the LLM gave it (absent when it gave none). */
  input?: unknown;
  /** When the wait began, epoch milliseconds (absent when what holds the batch does not say). */
  since?: number;
  /** The answer given and not taken yet (or taken, the run about to go on). */
  answer?: { approved: boolean; reason?: string; by?: string; at?: number; taken: boolean };
}

/** What waits in a batch, for `agent-sm approvals`. */
export interface ListedApprovals {
  /** The batch is running: it takes answers as they come. */
  running: boolean;
  calls: ListedCall[];
  /** What could not be read, each said once. */
  problems: string[];
  /** What names the batch in the JSON (`{ folder }`, `{ redis, batchId, queue }`). */
  names: Record<string, unknown>;
}

/** What `agent-sm approve|deny` answered. */
export interface GivenAnswers {
  calls: Array<Pick<ListedCall, 'callId' | 'tool'>>;
  /** What becomes of the answers, said after them: `the running batch takes it within a second`. */
  next: string;
}

/** One answer asked of `agent-sm approve|deny`. */
export interface AnswerAsked {
  run: string;
  /** The call; undefined: every call of the run not answered yet. */
  callId: string | undefined;
  approved: boolean;
  reason: string | undefined;
  /** Who answers. */
  by: string;
}

/**
 * Where a batch's approvals are read and answered: a history folder, or Redis (a BullMQ batch).
 * `where` (`in <folder>`) and `batch` (`the batch in <folder>`) name it in what the commands
 * print; `answerHint` is the command that answers there.
 */
export interface ApprovalsPlace {
  where: string;
  batch: string;
  answerHint: string;
  list(): Promise<ListedApprovals>;
  answer(asked: AnswerAsked): Promise<GivenAnswers>;
}
