import { barChart, lineChart, thin } from '../../lib/report/svgCharts';

describe('barChart', () => {
  it('barChart() draws one bar per row, longest full width, with labels escaped', () => {
    const svg = barChart(
      [
        { label: 'SendingToLLM', value: 300, cls: 'k-llm', note: '300 ms' },
        { label: '<script>', value: 150, cls: 'k-other', note: '150 ms' },
        { label: 'Ready', value: 0, cls: 'k-idle', note: '0 ms' },
      ],
      { title: 'Time per state', width: 760, labelWidth: 210 },
    );
    const widths = [...svg.matchAll(/<rect class="[^"]+" x="210" y="[\d.]+" width="([\d.]+)"/g)].map((m) =>
      Number(m[1]),
    );
    expect(widths).toEqual([400, 200, 0]);
    expect(svg).toContain('&lt;script&gt;');
    expect(svg).not.toContain('<script>');
  });
});

describe('lineChart', () => {
  it('lineChart() draws a step line from zero and the limit line at its value', () => {
    const svg = lineChart(
      [
        {
          name: 'cost',
          cls: 's-cost',
          points: [
            [50, 1],
            [100, 2],
          ],
        },
      ],
      {
        title: 'Spend',
        yFormat: (n) => `$${n}`,
        xFormat: (ms) => `${ms} ms`,
        limit: { value: 2, label: 'cap <$2>' },
        width: 190,
        height: 154,
      },
    );
    // x: 70 + ms/100 * 100; y: 14 + (1 - v/2.1) * 100
    expect(svg).toContain('<path class="line s-cost" d="M70,114H120V66.4H170V18.8H170"/>');
    expect(svg).toContain('<line class="limit" x1="70" y1="18.8" x2="170" y2="18.8"/>');
    expect(svg).toContain('cap &lt;$2&gt;');
  });
});

describe('thin', () => {
  it('thin() keeps at most max points, the last of each slice, and the final value', () => {
    const points = Array.from({ length: 10_000 }, (_, i) => [i, i * 2] as const);
    const out = thin(points, 100);
    expect(out.length).toBeLessThanOrEqual(100);
    expect(out.at(-1)).toEqual([9999, 19998]);
    expect(out.every((p, i) => i === 0 || p[0] > out[i - 1]![0])).toBe(true);
    expect(thin(points.slice(0, 5), 100)).toEqual(points.slice(0, 5));
  });
});
