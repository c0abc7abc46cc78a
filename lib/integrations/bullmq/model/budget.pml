/*
 * budget.pml — the money protocol of a distributed batch (lib/integrations/bullmq), for spin.
 *
 * W worker processes and a producer share one batch of T tasks, each run making up to C LLM
 * calls under a strict dollar cap kept in Redis. Money is in whole units: every call holds
 * HOLD (its worst case), a response is priced 1..HOLD. Each step below names the Lua script
 * (lib/integrations/bullmq/scripts.ts) or TypeScript function it stands for. A Lua script runs
 * atomically in Redis: it is one `atomic` block here. Between two blocks anything may happen:
 * another worker's step, a crash, a lock that expires, a Redis restart.
 *
 * What is checked (see README.md beside this file):
 *   MONEY    every moment: what the providers may have billed (`worst`: each sent call at its
 *            price once answered, at HOLD while in flight or failed-maybe-billed, 0 once provably
 *            not billed) <= the cap; and Redis's billed + uncertain (`spent`) <= the cap.
 *   LEAK     at the end: no hold left in Redis (batch and per run), no final-call hold kept.
 *   RESUME   a takeover charges every earlier attempt's unanswered reserve lines (at HOLD).
 *   ONCE     each task reported exactly once (RECORD's HSETNX), unless Redis lost the batch, and
 *            by the last attempt begun (or as lost or skipped): not by an attempt taken over.
 *   WRAP     a final call whose run kept its room (wrapUp) always fits.
 *
 * Variants (-D on spin's command line; run.sh runs them):
 *   Scenarios:  RETRY=n (retryLostRuns), MAXCRASH, MAXEXPIRE (a live worker whose job lock
 *               expired: a zombie, beside the attempt that took its run over), RESTART_AOF (restart losing nothing, a reply lost),
 *               RESTART_NOAOF (restart losing everything), NOSTORE (workers with no RunStore:
 *               a retried attempt writes the earlier one off instead of reading its records), EVERYSEC (restart losing the last
 *               write), WRAPUP (the final call's kept hold), RAISE (the producer raises the cap).
 *   Broken on purpose (each must fail with a trail):
 *               BROKEN_TAKEOVER_NO_RELEASE  takeOver charges the lost attempt, keeps its holds
 *               BROKEN_TAKEOVER_SPLIT       takeOver lets go of the holds a step before the charge
 *               BROKEN_RELEASE_TWICE        a run's end lets go of its last hold a second time
 *               BROKEN_WRAP_EARLY           the final call lets go of its kept hold a step early
 *               BROKEN_RESUME_LAST          a resume counts only the last attempt's reserve lines
 *               BROKEN_NO_HOLD_CHECK        reserve skips the spent + held + hold <= cap check
 *               BROKEN_SETTLE_KEEPS         a run's end lets go of its final-call hold only (before the fix)
 *               BROKEN_LOST_KEEPS           a run reported lost keeps its holds (before the fix)
 *               BROKEN_NOSTORE_KEEPS        with no store, a retried attempt does not write the earlier one off
 *               BROKEN_NO_FENCE             STEP does not fence a stale attempt (a zombie's releases and reservations go through)
 *               BROKEN_TAKEOVER_LETS_GO     a takeover lets go of the earlier attempt's call holds (charging what its records say) instead of charging them
 *               BROKEN_NO_CREDIT            a stale attempt's charge adds to the hold its takeover charged (counted twice)
 *               BROKEN_RECORD_NO_FENCE      RECORD takes a stale attempt's report (it may end the run before the attempt that took it over)
 *   MONEY_ONLY: the end-of-batch checks (ONCE, LEAK) left out, to find a MONEY counterexample.
 */

#ifndef W
#define W 3
#endif
#ifndef T
#define T 3
#endif
#ifndef C
#define C 2
#endif
#ifndef HOLD
#define HOLD 2
#endif
#ifndef CAP0
#define CAP0 5
#endif
#ifndef CAP1
#define CAP1 7
#endif
#ifndef RETRY
#define RETRY 1
#endif
#ifndef MAXCRASH
#define MAXCRASH 1
#endif
#ifndef MAXEXPIRE
#define MAXEXPIRE 0
#endif
#define MAXATT (RETRY + 1)

/* ---- Redis: the budget hash (KEYS[1]) and the run usage hash (KEYS[2]) ---- */
byte cap = CAP0;          /* budget `maxCostUsd` field (raised by RAISE) */
byte spent;               /* budget costUsd: billed + uncertain */
byte uncertain;           /* budget uncertainUsd (part of spent) */
byte held;                /* budget HELD_CODE */
byte raises;              /* budget RAISES_CODE */
byte runSpent[T];         /* runUsage `<idx>:costUsd` */
byte runHeld[T];          /* runUsage `<idx>:HELD_CODE` (the final-call hold among them) */
byte runWrap[T];          /* runUsage `<idx>:WRAP_HELD_CODE` */
byte started[T];          /* `started` hash: the run's attempt (BEGIN) */
bool reported[T];         /* `results` hash (RECORD: HSETNX) */
byte fence[T];            /* runUsage `<idx>:fa`: the attempt that took the run over last (STEP's fence) */
byte credit[T];           /* runUsage `<idx>:zc`: call holds a takeover charged as uncertain that a stale attempt may still charge */
bool gone;                /* the budget is missing: Redis restarted without persistence */
bool restarted;           /* Redis restarted once already */

/* ---- BullMQ: who holds each task's job lock (0: nobody, w+1: worker w) ---- */
byte owner[T];

/* ---- the store (disk, survives everything): a run's records per attempt ---- */
#define AT(r, a) ((r) * MAXATT + (a) - 1)
byte openLines[T * MAXATT];   /* reserve lines (journalWriter) with no llm line after them */
byte recCost[T * MAXATT];     /* cost of answered lines (billed, or charged at hold) */

/* ---- ghosts: the real world, and what the model counts ---- */
byte worst;               /* what the providers may have billed, at worst */
byte reports[T];          /* reports written (RECORD answered 1) */
byte reportAtt[T];        /* the attempt whose report was written (0: a lost or skipped report) */
byte crashes, expiries;
byte quit;                /* workers that have stopped */

/* MONEY: the real world never passes the cap, nor does Redis's count (a zombie's charge of a call
 * its run's takeover charged at its hold replaces that hold's charge: nothing is counted twice). */
#define CHECK_MONEY assert(worst <= cap); assert(spent <= cap)

/* A worker may crash here: its process dies, its job lock expires (the stalled check hands the
 * job back), everything it kept in memory (its deferred charge) is lost; it starts again. */
#define CRASHPOINT \
  if \
  :: crashes < MAXCRASH -> crashes++; goto crashed \
  :: true -> skip \
  fi

/*
 * step (STEP in scripts.ts, RedisBudget.#step), sent by attempt `att` of run r: charges `dueC`
 * (its uncertain part `dueU`), lets go of `rel`, then — when `want` — reserves a call holding
 * HOLD under the strict cap, with the run's final-call hold set to `wnew` (WRAP_CODES
 * keep/final/drop/lost; lost, the takeover's and the write-off's mode, raises the run's fence to
 * `att`). Answers in `ok`: 1 room, 0 refused (`!fit`/`!wrap`/spent), 2 `!missing`, 7 `!stale`
 * (`att` is below the run's fence: another attempt took the run over; its charge counted, and
 * its release turned into the replacement of the hold the takeover charged for that call).
 */
#define UNHOLD(r, by) \
  if :: held > (by) -> held = held - (by) :: else -> held = 0 fi; \
  if :: runHeld[r] > (by) -> runHeld[r] = runHeld[r] - (by) :: else -> runHeld[r] = 0 fi

#ifdef EVERYSEC
/* appendfsync everysec: a restart may lose the last write; the model keeps the state before it. */
byte sCap, sSpent, sUnc, sHeld, sRaises, sRunSpent[T], sRunHeld[T], sRunWrap[T], sStarted[T];
byte sFence[T], sCredit[T];
bool sReported[T];
byte si;
#define SNAPSHOT \
  d_step { sCap = cap; sSpent = spent; sUnc = uncertain; sHeld = held; sRaises = raises; \
    si = 0; do :: si < T -> sRunSpent[si] = runSpent[si]; sRunHeld[si] = runHeld[si]; \
      sRunWrap[si] = runWrap[si]; sStarted[si] = started[si]; sReported[si] = reported[si]; \
      sFence[si] = fence[si]; sCredit[si] = credit[si]; si++ \
    :: else -> break od }
#else
#define SNAPSHOT skip
#endif

inline step(r, att, dueC, dueU, rel, want, wmode, wkeep, ok) {
  atomic {
    if
    :: gone -> ok = 2
#ifndef BROKEN_NO_FENCE
    :: !gone && att < fence[r] ->
      /* The fence (STEP's `fa`): a stale attempt's charge counts — the money was spent — but it
       * lets go of nothing and reserves nothing. The hold it would let go was charged as uncertain
       * by the takeover (the credit): its charge takes that hold's place, so nothing counts twice. */
      SNAPSHOT;
      spent = spent + dueC; uncertain = uncertain + dueU; runSpent[r] = runSpent[r] + dueC;
#ifndef BROKEN_NO_CREDIT
      if :: rel < credit[r] -> z = rel :: else -> z = credit[r] fi;
#endif
      credit[r] = credit[r] - z; spent = spent - z; uncertain = uncertain - z; runSpent[r] = runSpent[r] - z;
      z = 0;
      ok = 7
    :: !gone && att >= fence[r] ->
#else
    :: else ->
#endif
      SNAPSHOT;
      spent = spent + dueC; uncertain = uncertain + dueU; runSpent[r] = runSpent[r] + dueC;
      if :: rel > 0 -> UNHOLD(r, rel) :: else -> skip fi;
      wold = runWrap[r];
      if
      :: wmode == 1 -> wnew = wkeep      /* keep */
      :: wmode >= 2 -> wnew = 0   /* final, drop, lost */
      :: else -> wnew = wold
      fi;
      /* drop (3): the run ends, every hold it has left goes; lost (4, the takeover and the write-off):
       * its calls' holds charged as uncertain first (each call may still leave: its worker may live
       * on), kept as the run's credit, and the fence raised to `att` */
      if
#ifndef BROKEN_TAKEOVER_LETS_GO
      :: wmode == 4 && runHeld[r] > wold ->
#else
      :: false ->
#endif
        spent = spent + runHeld[r] - wold; uncertain = uncertain + runHeld[r] - wold;
        runSpent[r] = runSpent[r] + runHeld[r] - wold; credit[r] = credit[r] + runHeld[r] - wold
      :: else -> skip
      fi;
      if :: wmode == 4 && att > fence[r] -> fence[r] = att :: else -> skip fi;
      if
      :: wmode == 3 || wmode == 4 ->
        wnew = 0; wold = 0; runWrap[r] = 0;
#ifndef BROKEN_SETTLE_KEEPS
        UNHOLD(r, runHeld[r])
#else
        if :: runWrap[r] > 0 -> UNHOLD(r, runWrap[r]) :: else -> skip fi
#endif
      :: else -> skip
      fi;
      if
      :: !want -> ok = 1
      :: want && spent >= cap -> ok = 0          /* SPENT: the cap is spent */
#ifndef BROKEN_NO_HOLD_CHECK
      :: want && spent < cap && spent + held + wnew + HOLD > cap + wold -> ok = 0   /* !fit or !wrap */
      :: want && spent < cap && spent + held + wnew + HOLD <= cap + wold ->
#else
      :: want && spent < cap ->
#endif
        held = held + HOLD; runHeld[r] = runHeld[r] + HOLD;
        /* rewrap */
        if
        :: wnew > wold -> held = held + wnew - wold; runHeld[r] = runHeld[r] + wnew - wold
        :: wnew < wold -> UNHOLD(r, wold - wnew)
        :: else -> skip
        fi;
        runWrap[r] = wnew;
        ok = 1
      fi
    fi;
    wold = 0; wnew = 0;
    CHECK_MONEY
  }
}

proctype Worker(byte w) {
  byte r, a, c, k, rec, inR, h, miss, dueC, dueU, dueRel, p, ok, wold, wnew, wmode, wkeep, z;
  bool final, kept;   /* kept: a ghost, the run kept its final call's room */

idle:
  /* JobProcessor.process: BullMQ hands a job whose lock nobody holds (a new one, or a stalled one). */
  atomic { dueC = 0; dueU = 0; dueRel = 0; final = false; kept = false; c = 0; a = 0; ok = 0; wmode = 0; wkeep = 0 };
  if
  :: atomic { (gone || (reported[0] && (T < 2 || reported[1]) && (T < 3 || reported[2]))) -> quit++ }; goto done
  :: atomic { (!gone && owner[0] == 0 && !reported[0]) -> owner[0] = w + 1; r = 0 }
  :: atomic { (T > 1 && !gone && owner[1] == 0 && !reported[1]) -> owner[1] = w + 1; r = 1 }
  :: atomic { (T > 2 && !gone && owner[2] == 0 && !reported[2]) -> owner[2] = w + 1; r = 2 }
  fi;

  /* begin (BEGIN): done, lost, stopped, or run as attempt a. */
  atomic {
    if
    :: gone -> ok = 2
    :: !gone && reported[r] -> ok = 3                                  /* 'done' */
    :: !gone && !reported[r] && started[r] >= MAXATT -> ok = 4         /* 'lost' */
    :: !gone && !reported[r] && started[r] < MAXATT && spent >= cap -> ok = 5   /* 'stopped' */
    :: !gone && !reported[r] && started[r] < MAXATT && spent < cap ->
      started[r]++; a = started[r]; ok = 1
    fi
  }
  if
  :: ok == 2 || ok == 3 -> goto release
  :: ok == 4 ->
#ifndef BROKEN_LOST_KEEPS
    /* JobProcessor 'lost' -> RedisBudget.writeOff -> STEP (lost, as the attempt after the last
     * begun): the calls' holds charged as uncertain, every hold let go, the last attempt fenced */
    step(r, MAXATT + 1, 0, 0, 0, false, 4, 0, ok);
#endif
    goto record                                 /* lostReport */
  :: ok == 5 -> goto record                     /* skippedReport: no run */
  :: ok == 1 -> skip
  fi;
  CRASHPOINT;

  if
#ifdef NOSTORE
  :: a > 1 ->
    /* runWorkerTask with no store (nothing to read what the earlier attempt spent):
     * RedisBudget.writeOff -> STEP (lost, attempt a): its calls' holds charged as uncertain, every
     * hold let go, the earlier attempts fenced */
#ifndef BROKEN_NOSTORE_KEEPS
    step(r, a, 0, 0, 0, false, 4, 0, ok);
    if :: ok == 2 -> goto record :: else -> skip fi;
#endif
    CRASHPOINT
#else
  :: a > 1 ->
    /* WorkerStore.earlier: the store's records of every earlier attempt (storeRunState): answered
     * lines at their cost, reserve lines with no answer at their hold (uncertain). */
    d_step {
      rec = 0; k = 1;
#ifdef BROKEN_RESUME_LAST
      k = a - 1;
#endif
      do
      :: k < a -> rec = rec + recCost[AT(r, k)] + openLines[AT(r, k)] * HOLD; k++
      :: else -> break
      od;
      /* RESUME: every earlier attempt's unanswered reserve line is counted (checked against all of them). */
      h = 0; k = 1;
      do :: k < a -> h = h + recCost[AT(r, k)] + openLines[AT(r, k)] * HOLD; k++ :: else -> break od;
      assert(rec == h)
    }
    /* WorkerStore.earlier: HMGET runUsage `<idx>:costUsd` (what reached Redis) */
    inR = runSpent[r];
    if :: rec > inR -> miss = rec - inR :: else -> miss = 0 fi;
    CRASHPOINT;
#if defined(BROKEN_TAKEOVER_NO_RELEASE)
    step(r, a, miss, miss, 0, false, 0, 0, ok);
#elif defined(BROKEN_TAKEOVER_SPLIT)
    step(r, a, 0, 0, 0, false, 3, 0, ok);
    step(r, a, miss, miss, 0, false, 0, 0, ok);
#elif defined(BROKEN_TAKEOVER_LETS_GO)
    step(r, a, miss, miss, 0, false, 4, 0, ok);
#else
    /* RedisBudget.takeOver -> STEP (lost, attempt a), one script: every call hold the run left
     * charged as uncertain (its call may have left, or may still: the earlier worker may live on),
     * every hold let go, the earlier attempts fenced. Under a strict cap the holds are what the
     * earlier attempts may have spent beyond what reached Redis; the records' dollars are not sent
     * (the code sends their tokens, which the model leaves out): a zombie's charge landing between
     * the read and this step would be counted twice. */
    step(r, a, 0, 0, 0, false, 4, 0, ok);
#endif
    d_step { rec = 0; inR = 0; h = 0; miss = 0; k = 0 };
    if :: ok == 2 -> goto record :: else -> skip fi;
    CRASHPOINT
#endif
  :: else -> skip
  fi;

  /* the run's LLM calls (AgentWithStateMachine turn, through UsageMeter -> RedisBudget) */
  do
  :: c < C ->
#ifdef WRAPUP
    /* WrapUp/holdFinalCall: an ordinary call keeps HOLD for the final call; the last call is the final one. */
    if :: final || c == C - 1 -> wmode = 2; wkeep = 0 :: else -> wmode = 1; wkeep = HOLD fi;
#ifdef BROKEN_WRAP_EARLY
    if :: wmode == 2 -> step(r, a, 0, 0, 0, false, 3, 0, ok) :: else -> skip fi;
#endif
#else
    wmode = 0; wkeep = 0;
#endif
    /* RedisBudget.reserve('llm', { costUsd: HOLD, wrapUp }) -> STEP, carrying the deferred charge */
    step(r, a, dueC, dueU, dueRel, true, wmode, wkeep, ok);
    dueC = 0; dueU = 0; dueRel = 0;     /* sent once: a lost reply does not send them again */
#ifdef RESTART_AOF
    /* A restart (with AOF) cut the reply off: the script ran, the worker sees an error and ends the run. */
    if
    :: atomic { ok == 1 && !restarted -> restarted = true; ok = 6 }
    :: else -> skip
    fi;
#endif
    /* WRAP: a final call finds the room its run kept for it (holdFinalCall, STEP's `final`). */
    assert(!(kept && wmode == 2) || ok != 0);
    if :: ok == 1 && wmode == 1 -> kept = true :: else -> skip fi;
    if
    :: ok == 2 || ok == 6 -> break                /* !missing, or the reply lost: the run ends as an error */
    :: ok == 7 -> break                           /* !stale (TakenOverError): the call is not made, the run ends */
    :: ok == 0 && wmode == 1 -> final = true; goto nextcall   /* !wrap: wrap up with the final call */
    :: ok == 0 && wmode != 1 -> break             /* refused: the run ends (budget_exceeded) */
    :: ok == 1 -> skip
    fi;
    CRASHPOINT;
    /* journalWriter: the ledger's reserve line, written before the call is sent */
    openLines[AT(r, a)]++;
    CRASHPOINT;
    /* the provider: the call leaves */
    atomic { worst = worst + HOLD; CHECK_MONEY };
    CRASHPOINT;
    /* endAttempt / chargeAttempt: billed, uncertain, or released */
    if
    :: atomic { p = 1; worst = worst - (HOLD - p); dueC = p } /* priced: billed */
    :: atomic { p = HOLD; dueC = HOLD; dueU = HOLD } /* failed after it may have left: uncertain at its hold */
    :: atomic { p = 0; worst = worst - HOLD; dueC = 0 } /* provably not billed: released */
    fi;
    dueRel = HOLD;
#ifdef BROKEN_RELEASE_TWICE
    step(r, a, 0, 0, HOLD, false, 0, 0, ok);
#endif
    /* journalWriter: the llm line answers the reserve line (cost, or chargedAtHold, or released) */
    atomic { openLines[AT(r, a)]--; recCost[AT(r, a)] = recCost[AT(r, a)] + p; p = 0 };
    CRASHPOINT;
    if :: wmode == 2 -> break :: else -> skip fi;
nextcall:
    c++
  :: else -> break
  od;

  /* RedisBudget.settle (runWorkerTask's settleCharge): the deferred charge, then every hold the run has left dropped */
  step(r, a, dueC, dueU, dueRel, false, 3, 0, ok);
  dueC = 0; dueU = 0; dueRel = 0;
  CRASHPOINT;

record:
  /* RECORD (recordOnce): the report, once (HSETNX); a stale attempt's (below the attempt BEGIN
   * recorded last: the run was begun again) is refused; lost and skipped reports carry none (a = 0) */
  atomic {
    if
#ifndef BROKEN_RECORD_NO_FENCE
    :: !gone && !reported[r] && (a == 0 || a >= started[r]) -> reported[r] = true; reports[r]++; reportAtt[r] = a
#else
    :: !gone && !reported[r] -> reported[r] = true; reports[r]++; reportAtt[r] = a
#endif
    :: else -> skip
    fi
  }
release:
  /* the job completes (or its zombie's completion is refused): the lock is let go */
  atomic { if :: owner[r] == w + 1 -> owner[r] = 0 :: else -> skip fi };
  goto idle;

crashed:
  atomic { if :: owner[r] == w + 1 -> owner[r] = 0 :: else -> skip fi };
  goto idle;

done:
  skip
}

/* A live worker's job lock expires (a long GC pause, a partition): the stalled check hands the
 * job to another worker while this one goes on — a zombie. */
active proctype Expiry() {
  byte r;
  do
  :: atomic { expiries < MAXEXPIRE && owner[0] != 0 -> owner[0] = 0; expiries++ }
  :: atomic { T > 1 && expiries < MAXEXPIRE && owner[1] != 0 -> owner[1] = 0; expiries++ }
  :: atomic { T > 2 && expiries < MAXEXPIRE && owner[2] != 0 -> owner[2] = 0; expiries++ }
  :: quit == W -> break
  od
}

/* The producer: submitBatch (CREATE, the initial state above), raiseCap (RAISE), and Redis's
 * restarts; then, once every worker stopped, the end-of-batch checks. */
active proctype Producer() {
  byte r;
  do
#ifdef RAISE
  :: atomic { raises == 0 && !gone -> cap = CAP1; raises++ }   /* RAISE: cap raised, never lowered */
#endif
#ifdef RESTART_NOAOF
  :: atomic { !restarted -> restarted = true; gone = true }   /* every key lost: scripts answer !missing */
#endif
#ifdef EVERYSEC
  :: atomic { !restarted -> restarted = true;                  /* the last write lost */
      cap = sCap; spent = sSpent; uncertain = sUnc; held = sHeld; raises = sRaises;
      r = 0; do :: r < T -> runSpent[r] = sRunSpent[r]; runHeld[r] = sRunHeld[r];
        runWrap[r] = sRunWrap[r]; started[r] = sStarted[r]; reported[r] = sReported[r];
        fence[r] = sFence[r]; credit[r] = sCredit[r]; r++
      :: else -> break od;
      CHECK_MONEY }
#endif
  :: quit == W -> break
  od;
  /* The end: every worker stopped. */
  r = 0;
  do
  :: r < T ->
    if
    :: !gone -> skip;
#ifndef MONEY_ONLY
      assert(reports[r] == 1);                        /* ONCE */
      assert(reportAtt[r] == 0 || reportAtt[r] == started[r]);   /* ONCE: by the last attempt begun */
      assert(runHeld[r] == 0 && runWrap[r] == 0)      /* LEAK: the run's holds */
#endif
    :: else -> assert(reports[r] <= 1)
    fi;
    r++
  :: else -> break
  od;
#ifndef MONEY_ONLY
  assert(gone || held == 0);                          /* LEAK: the batch's holds */
#endif
  CHECK_MONEY
}

init {
  byte i;
  atomic {
    i = 0;
    do
    :: i < W -> run Worker(i); i++
    :: else -> break
    od
  }
}
