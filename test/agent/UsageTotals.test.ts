import fc from 'fast-check';
import { USAGE_FIELD_NAMES } from '../../lib/internal/fieldLists';
import { addUsage, addUsageTo, emptyUsage, type UsageDelta } from '../../lib/agent/UsageTotals';

describe('UsageTotals', () => {
  it('emptyUsage() has a zero for each usage field, in order', () => {
    expect(Object.entries(emptyUsage())).toEqual(USAGE_FIELD_NAMES.map((k) => [k, 0]));
  });

  it('addUsageTo() adds every usage field as addUsage() does, and ignores other keys (property-based)', () => {
    const amount = fc.oneof(
      fc.nat(1000),
      fc.integer({ min: 0, max: 300 }).map((c) => c / 100),
    );
    const delta = fc.dictionary(
      fc.constantFrom<string>(...USAGE_FIELD_NAMES, 'other', 'toString'),
      fc.option(amount, { nil: undefined }),
      { maxKeys: 8 },
    );
    fc.assert(
      fc.property(fc.array(delta, { maxLength: 12 }), (deltas) => {
        const inPlace = emptyUsage();
        let copied = emptyUsage();
        for (const d of deltas) {
          addUsageTo(inPlace, d as UsageDelta);
          copied = addUsage(copied, d as UsageDelta);
        }
        expect(inPlace).toEqual(copied);
        expect(Object.keys(inPlace)).toEqual([...USAGE_FIELD_NAMES]);
      }),
    );
  });
});
