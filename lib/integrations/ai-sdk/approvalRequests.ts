import type { ToolCall } from 'agent-state-machine';

/** A tool call the AI SDK asks a person to approve: the request's id, and the call. */
export interface ApprovalRequest {
  approvalId: string;
  call: ToolCall;
}

/**
 * The `tool-approval-request` parts of a step's content (AI SDK 6 and 7: a tool's
 * `needsApproval`, 7's `toolApproval` status `user-approval`) that wait for a person: not those 7
 * approved or denied on its own (`isAutomatic`). Pure.
 */
export function approvalRequests(content: unknown): ApprovalRequest[] {
  if (!Array.isArray(content)) return [];
  const requests: ApprovalRequest[] = [];
  for (const part of content as Array<Record<string, unknown> | null>) {
    if (part?.type !== 'tool-approval-request' || part.isAutomatic === true) continue;
    const call = part.toolCall as { toolCallId?: unknown; toolName?: unknown; input?: unknown } | undefined;
    if (
      typeof part.approvalId !== 'string' ||
      typeof call?.toolCallId !== 'string' ||
      typeof call.toolName !== 'string'
    )
      continue;
    requests.push({
      approvalId: part.approvalId,
      call: { id: call.toolCallId, name: call.toolName, input: call.input },
    });
  }
  return requests;
}
