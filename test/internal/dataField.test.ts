import { dataField } from '../../lib/internal/dataField';

describe('dataField()', () => {
  it('dataField() reads a field of a plain object, and nothing of anything else', () => {
    expect(dataField({ usage: 1 }, 'usage')).toBe(1);
    expect(dataField({}, 'usage')).toBeUndefined();
    for (const data of [undefined, null, 'usage', 42, [1, 2]]) expect(dataField(data, 'length')).toBeUndefined();
  });
});
