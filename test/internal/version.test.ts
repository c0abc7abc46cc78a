import * as fs from 'node:fs';
import * as path from 'node:path';
import { VERSION } from '../../lib/internal/version';

describe('VERSION', () => {
  it('equals the version in package.json', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(VERSION).toBe(pkg.version);
  });
});
