import { describe, expect, it } from 'vitest';
import * as naming from '../../generator/naming.js';

describe('naming', () => {
  it.each([
    ['template', 'Template'],
    ['tlsConfig', 'TlsConfig'],
    ['rbd-mirror', 'RbdMirror'],
    ['-Xms', 'Xms'],
    ['-XX', 'XX'],
    ['$propertyBag', 'PropertyBag'],
    ['__proto__', 'Proto'],
    ['a.b', 'AB'],
    ['group_states', 'GroupStates'],
    ['3d', '3d'],
  ])('pascal(%j) is %j', (input, expected) => {
    expect(naming.pascal(input)).toBe(expected);
  });

  it.each([
    ['WidgetSpec', 'template', 'WidgetSpecTemplate'],
    ['WidgetSpecTls', 'tlsConfig', 'WidgetSpecTlsConfig'],
    ['XSpecAffinityPodAffinity', 'podAffinityTerm', 'XSpecAffinityPodAffinityTerm'],
    ['WidgetSpecTls', 'tls', 'WidgetSpecTlsTls'],
    ['WidgetSpec', 'spec', 'WidgetSpecSpec'],
    ['WidgetSpec', '-', 'WidgetSpecField'],
    ['TLSRouteSpec', 'TLSOptions', 'TLSRouteSpecTLSOptions'],
  ])('childName(%j, %j) is %j', (parent, property, expected) => {
    expect(naming.childName(parent, property)).toBe(expected);
  });

  it.each([
    ['Widget', 'widgets', 'Widgets'],
    ['Prometheus', 'prometheuses', 'Prometheuses'],
    ['CephNFS', 'cephnfses', 'CephNFSes'],
    ['KopfExample', 'kopfexamples', 'KopfExamples'],
    ['Mouse', 'mice', 'Mice'],
    ['Sheep', 'sheep', 'Sheep'],
  ])('descriptorName(%j, %j) is %j', (kind, plural, expected) => {
    expect(naming.descriptorName(kind, plural)).toBe(expected);
  });

  it('makes identifiers that start with a letter or underscore', () => {
    expect(naming.identifier('3dWidget')).toBe('_3dWidget');
    expect(naming.identifier('日本')).toBe('_');
    expect(naming.identifier('Web-App')).toBe('WebApp');
  });

  it.each([
    ['string', 'string_'],
    ['class', 'class_'],
    ['any', 'any_'],
    ['arguments', 'arguments_'],
    ['await', 'await_'],
    ['Object', 'Object'],
    ['Record', 'Record'],
    ['strings', 'strings'],
  ])('declarable(%j) is %j', (input, expected) => {
    expect(naming.declarable(input)).toBe(expected);
  });

  it('hands out unique names in claim order and never a reserved one', () => {
    const registry = new naming.NameRegistry(['WidgetPatch']);
    expect(registry.claim('WidgetSpecFooBar')).toBe('WidgetSpecFooBar');
    expect(registry.claim('WidgetSpecFooBar')).toBe('WidgetSpecFooBar2');
    expect(registry.claim('WidgetSpecFooBar')).toBe('WidgetSpecFooBar3');
    expect(registry.claim('WidgetPatch')).toBe('WidgetPatch2');
    expect(registry.has('WidgetSpecFooBar3')).toBe(true);
  });
});
