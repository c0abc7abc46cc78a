import {
  AnsweredAlreadyError,
  answerFileName,
  markTaken,
  readAnswers,
  writeAnswer,
  type FolderAnswer,
  type StoredAnswer,
} from '../keeping/approvalAnswers';
import type { RunStore } from '../keeping/RunStore';

/**
 * Where people's answers to a batch's approval requests wait for the batch
 * (`agent-sm approve|deny`), each taken once: a history folder's answers folder, or a store's.
 * `write` throws `AnsweredAlreadyError` when the call has an answer already (waiting, or taken
 * for the same wait), keeping nothing.
 */
export interface AnswerBox {
  /** The batch, in messages: its folder, or `<store> batch <id>`. */
  readonly where: string;
  write(answer: FolderAnswer): Promise<void>;
  read(): Promise<{ answers: StoredAnswer[]; problems: string[] }>;
  markTaken(answer: StoredAnswer): Promise<void>;
}

/** The answers folder of history folder `dir` (`batch.answers/`). */
export function folderAnswerBox(dir: string): AnswerBox {
  return {
    where: dir,
    write: async (answer) => writeAnswer(dir, answer),
    read: async () => readAnswers(dir),
    markTaken: async (answer) => markTaken(dir, answer),
  };
}

/** The store that keeps the answers of a store's batch: one with `keepAnswer`, `readAnswers` and `markAnswerTaken`. */
export type AnswerStore = RunStore & Required<Pick<RunStore, 'keepAnswer' | 'readAnswers' | 'markAnswerTaken'>>;

/** Whether `store` keeps people's answers (its optional answer methods are there). */
export function keepsAnswers(store: RunStore): store is AnswerStore {
  return (
    typeof store.keepAnswer === 'function' &&
    typeof store.readAnswers === 'function' &&
    typeof store.markAnswerTaken === 'function'
  );
}

/** The answers `store` keeps for its batch `batchId`. */
export function storeAnswerBox(store: AnswerStore, batchId: string): AnswerBox {
  return {
    where: `${store.name} batch ${batchId}`,
    write: async (answer) => {
      const existing = await store.keepAnswer(batchId, answer);
      if (existing !== undefined) throw new AnsweredAlreadyError(answer, existing);
    },
    read: async () => ({
      answers: (await store.readAnswers(batchId)).map((a) => ({ ...a, file: answerFileName(a.run, a.callId) })),
      problems: [],
    }),
    markTaken: (answer) => {
      const { file: _file, taken: _taken, ...kept } = answer;
      return store.markAnswerTaken(batchId, kept);
    },
  };
}
