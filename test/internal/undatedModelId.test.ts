import { undatedModelId } from '../../lib/internal/undatedModelId';

describe('undatedModelId', () => {
  it.each([
    ['gpt-4.1-2025-04-14', 'gpt-4.1'],
    ['gpt-local-2025-01-01', 'gpt-local'],
    ['claude-3-5-haiku-20241022', 'claude-3-5-haiku'],
  ])('strips the trailing date of %s', (dated, base) => {
    expect(undatedModelId(dated)).toBe(base);
  });

  it.each(['gpt-4.1', 'gpt-4o-mini', 'o3', 'model-2025-04', 'model-202504141', 'm-2025-04-14-preview', '-20250414'])(
    'finds no date in %s',
    (model) => {
      expect(undatedModelId(model)).toBeUndefined();
    },
  );
});
